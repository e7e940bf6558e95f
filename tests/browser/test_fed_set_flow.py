"""An organizer's FED questionnaire from the browser: a static context/response file uploaded on the
FED page (a bad one refused first, nothing created), a flagged response kept or dropped in the review
queue, the FED job launched, and, once raters have answered, the results with their intervals and
the raters' agreement on the set's page and in the CSV it offers to download; that page passes axe
and fits a phone."""
import csv
import io
import json

import pytest
from playwright.sync_api import expect

from annotation import task_types
from annotation.services.claims import claim_next_slot, submit_response
from evaluation.models import FedCandidate, FedSet
from quorum.numbers import decimals

from .test_accessibility import _violations, _width

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CONTEXT = [{"speaker": "user", "text": "Any plans for the weekend?"}]
LINES = [
    {"context_id": "c1", "context": CONTEXT, "responses": {"bot-a": "Hiking in the hills.", "bot-b": "No idea."}},
    {"context_id": "c2", "context": CONTEXT, "responses": {"bot-a": "Reading a zebra book.", "bot-b": "Shut up."}},
]


def _upload(page, name, text):
    form = page.locator("form", has=page.get_by_role("button", name="Import and filter"))
    form.get_by_label("Name").fill(name)
    form.get_by_label("JSONL file").set_input_files({"name": "fed.jsonl", "mimeType": "application/json", "buffer": text.encode()})
    form.get_by_role("button", name="Import and filter").click()


def test_an_organizer_builds_launches_and_reads_a_fed_set(page, dialogs, organizer_login, make_annotator, settings):
    settings.QUORUM_OFFENSIVE_WORDS = ["zebra", "shut up"]
    organizer_login("/evaluation/fed/")

    _upload(page, "Weekend replies", "not json\n")
    expect(page.get_by_role("alert")).to_contain_text("Nothing was imported")
    assert not FedSet.objects.exists()

    _upload(page, "Weekend replies", "\n".join(json.dumps(line) for line in LINES))
    expect(page.locator(".messages")).to_contain_text("flagged by the offensive-word filter wait for your review")
    fed_set = FedSet.objects.get(name="Weekend replies")
    expect(page.get_by_role("button", name="Launch the FED job")).to_be_disabled()  # two flagged wait
    flagged = {c.flagged_words[0]: c for c in FedCandidate.objects.filter(fed_set=fed_set).exclude(review="clean")}
    zebra, rude = flagged["zebra"], flagged["shut up"]
    page.locator(f"#candidate-{zebra.pk}").get_by_role("button", name="Keep (rate it)").click()
    expect(page.locator(".messages")).to_contain_text("Kept: it is evaluated.")
    page.locator(f"#candidate-{rude.pk}").get_by_role("button", name="Drop (never rated)").click()
    expect(page.locator(".messages")).to_contain_text("Dropped: it is left out.")

    launch = page.locator("#fed-launch-form")
    launch.get_by_label("Raters").fill("2")
    launch.get_by_role("button", name="Launch the FED job").click()
    expect(page.locator(".messages")).to_contain_text("items.")
    fed_set.refresh_from_db()
    job = fed_set.job
    assert job is not None and job.items.count() == 3  # the dropped response is never rated
    assert "Shut up." not in json.dumps([i.payload for i in job.items.all()])

    questions = [f for f in task_types.get(job.task_type).answer_fields(job.settings) if f.get("choices")]
    for name, lift in (("ria", 0), ("rob", 1)):
        worker = make_annotator(name)[1]
        while (slot := claim_next_slot(job=job, worker=worker)) is not None:
            answers = {q["name"]: list(q["choices"])[min(len(q["choices"]) - 1, slot.item.position + lift)] for q in questions}
            submit_response(slot_id=slot.pk, worker=worker, answers=answers)

    page.reload()
    expect(page.locator("#fed-job")).to_contain_text("6 of 6 ratings collected")
    results = page.locator("#fed-results")
    expect(results).to_contain_text("bot-a")
    expect(results).to_contain_text("bot-b")
    expect(page.locator("#fed-agreement")).to_contain_text(questions[0]["label"])

    with page.expect_download() as waiting:
        page.get_by_role("link", name="Download the results and agreement (CSV)").click()
    download = waiting.value
    assert download.suggested_filename == f"fed-{fed_set.pk}-results.csv"
    rows = list(csv.DictReader(io.StringIO(download.path().read_text())))
    means = [r for r in rows if r["statistic"] == "mean"]
    assert {r["system"] for r in means} == {"bot-a", "bot-b"} and {r["question"] for r in means} == {q["name"] for q in questions}
    bot_b = next(r for r in means if r["system"] == "bot-b" and r["question"] == questions[0]["name"])
    assert bot_b["items"] == "1" and bot_b["answers"] == "2"  # its one kept response, rated twice
    shown = results.locator("tr", has_text="bot-a").inner_text()
    bot_a = next(r for r in means if r["system"] == "bot-a" and r["question"] == questions[0]["name"])
    assert decimals(bot_a["value"]) in shown  # the page writes the file's mean by the house rule

    # The page with its results passes axe and fits a phone (its tables scroll in their boxes).
    assert _violations(page) == []
    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    assert _width(page) <= 390
    assert dialogs == []
