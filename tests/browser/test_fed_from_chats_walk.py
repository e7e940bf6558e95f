"""An organizer's first FED set from interactive chats, walked as a first-timer would: the Evaluation
page names FED; the chat job's results page offers to rate its dialogs with the FED questions and
the link lands on the form with that job picked and a name to start from; the new set says when its
transcripts were frozen and that dialogs completed later are not in it while the chat job is live;
once launched ("1 item.") its Results card says no ratings count yet instead of standing empty, and
fills once a rater has answered."""
import re

import pytest
from playwright.sync_api import expect

from annotation import task_types
from annotation.services.claims import claim_next_slot, submit_response
from evaluation.models import FedSet

from ..evaluation.test_fed import chats_completed

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_first_fed_set_from_a_chat_jobs_dialogs(page, organizer_login, make_annotator):
    chat = chats_completed(make_annotator, ["ref-a", "ref-b"], job_name="Round 1 chats", workers=["w1"])  # one of two dialogs
    page.set_viewport_size({"width": 1280, "height": 900})
    organizer_login("/evaluation/")
    expect(page.get_by_role("link", name="FED questionnaires")).to_be_visible()  # the Evaluation page names FED

    page.goto(f"/evaluation/interactive/{chat.pk}/")
    page.get_by_role("link", name="make a FED set of their transcripts").click()
    form = page.locator("#fed-chats-form")
    expect(form.get_by_label("Chat job")).to_have_value(str(chat.pk))
    expect(form.get_by_label("Name")).to_have_value("Round 1 chats (FED)")
    form.get_by_role("button", name="Freeze transcripts and filter").click()

    expect(page.locator(".messages")).to_contain_text("“Round 1 chats (FED)”: 1 to rate.")
    expect(page.locator("#fed-frozen")).to_contain_text("dialogs of Round 1 chats completed after that are not in this set")
    expect(page.locator("#fed-frozen")).to_contain_text("that job is still live")
    launch = page.locator("#fed-launch-form")
    launch.get_by_label("Raters").fill("1")
    launch.get_by_role("button", name="Launch the FED job").click()
    expect(page.locator(".messages")).to_contain_text(re.compile(r"Launched “FED: Round 1 chats \(FED\)”: 1 item\.$"))
    expect(page.locator("#results")).to_contain_text("No ratings count yet")

    job = FedSet.objects.get(chat_job=chat).job
    rater = make_annotator("rater")[1]
    slot = claim_next_slot(job=job, worker=rater)
    fields = [f for f in task_types.get(job.task_type).answer_fields(job.settings) if f.get("choices")]
    submit_response(slot_id=slot.pk, worker=rater, answers={f["name"]: 2 for f in fields})
    page.reload()  # the read asks for the results of the new answer; here tasks run at its commit
    expect(page.locator("#fed-results")).to_contain_text("ref-a")
    expect(page.locator("#fed-no-results")).to_have_count(0)
