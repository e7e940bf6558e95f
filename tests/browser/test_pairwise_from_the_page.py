"""A pairwise comparison from empty to ranking, as a first-time organizer does it in the browser:
from the dashboard to Evaluation, "create one", the format shown on the new-job page, a file with
a bad line refused naming the line, the good file accepted, the job launched; a worker answers;
the ranking page ranks the systems."""
import json
import re

import pytest
from playwright.sync_api import expect

from annotation.models import Job
from tests.browser.saving import expect_saved

from .test_annotator_flow import claim_by_keyboard, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CONTEXT = [{"speaker": "user", "text": "Is there parking at the Alpha Hotel?"}]


def _pair(n, a, b):
    return {"context": CONTEXT, "instance": f"c{n}", "a": {"system": a, "text": f"Yes, free parking (answer {n})."}, "b": {"system": b, "text": f"I do not know (answer {n})."}}


def test_a_pairwise_job_is_created_launched_answered_and_ranked_from_the_pages(page, dialogs, organizer_login, make_annotator, tmp_path):
    make_annotator("pia")
    organizer_login("/organize/")
    page.get_by_role("link", name="Evaluation", exact=True).first.click()
    page.locator("#new-pairwise-job").click()
    expect(page.get_by_label("Task type")).to_have_value("pairwise")
    expect(page.locator("#payload-format-pairwise")).to_be_visible()
    expect(page.locator("#payload-format-pairwise")).to_contain_text('"a": {"system"')
    expect(page.locator("#turn-selection")).to_be_hidden()  # a payload type selects no turns

    bad = tmp_path / "pairs.jsonl"
    bad.write_text(json.dumps(_pair(1, "sys-A", "sys-B")) + "\n" + json.dumps({"a": {"system": "x", "text": "t"}}) + "\n")
    page.get_by_label("Name").fill("Parking answers")
    page.get_by_label("Payload file").set_input_files(str(bad))
    page.get_by_role("button", name="Create draft job").click()
    expect(page.locator("body")).to_contain_text("pairs.jsonl line 2")
    assert not Job.objects.exists()

    good = tmp_path / "pairs.jsonl"
    good.write_text("\n".join(json.dumps(_pair(n, "sys-A", "sys-B")) for n in range(3)) + "\n")
    page.get_by_label("Payload file").set_input_files(str(good))
    page.get_by_role("button", name="Create draft job").click()
    expect(page.locator("body")).to_contain_text("Created draft job 'Parking answers'")
    page.get_by_role("button", name="Launch", exact=True).click()
    expect(page.locator("body")).to_contain_text(re.compile("live", re.I))

    worker_tab = page.context.browser.new_context(base_url=page.url.split("/organize")[0]).new_page()
    log_in(worker_tab, "pia", "pia-pass-1")
    claim_by_keyboard(worker_tab, "Parking answers")
    for _ in range(3):
        expect(worker_tab.locator("#work-form[data-ready=true]")).to_be_visible()
        assert "sys-A" not in worker_tab.content()
        side = worker_tab.locator("#candidate-1 .text").inner_text()
        pick = "1" if "Yes, free parking" in side else "2"
        worker_tab.get_by_role("radio", name=re.compile(f"Response {pick} is better")).check()
        worker_tab.get_by_role("button", name="Submit").click()
        expect_saved(worker_tab)
    worker_tab.context.close()

    page.goto("/organize/")
    page.get_by_role("link", name="Evaluation", exact=True).first.click()
    page.locator("#pairwise").get_by_role("link", name="Parking answers").click()
    rows = page.locator("#ranking tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.first).to_contain_text("sys-A")
    expect(rows.first).to_contain_text("3")  # its wins
    assert dialogs == []
