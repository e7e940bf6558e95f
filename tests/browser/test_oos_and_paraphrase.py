"""The CGoDial collection pages in a real browser: an out-of-scope turn and question paraphrases are
refused with what to fix when bad, and saved when good."""

import pytest
from playwright.sync_api import expect

from annotation.models import Corpus, Dialog, Response, Turn
from annotation.services.jobs import create_job, launch_job
from annotation.services.payload_jobs import create_payload_job
from tests.browser.saving import expect_saved

from .test_annotator_flow import claim_by_keyboard, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_out_of_scope_turn_is_refused_when_in_scope_and_saved_when_not(page, dialogs, make_annotator):
    _user, worker = make_annotator("oona")
    corpus = Corpus.objects.create(name="hotels", source_format="jsonl")
    dialog = Dialog.objects.create(corpus=corpus, external_id="d0", position=0)
    Turn.objects.create(dialog=dialog, index=0, speaker="user", text="I need a cheap hotel.")
    Turn.objects.create(dialog=dialog, index=1, speaker="system", text="Alpha Hotel is cheap.")
    Turn.objects.create(dialog=dialog, index=2, speaker="user", text="Does it have free parking?")
    qa = [{"question": "Does the Alpha Hotel have a gym?", "answer": "Yes, open all day."}]
    settings = {"insert_probability": 1.0, "max_per_dialog": 1, "seed": 0, "qa_pairs": qa}
    launch_job(create_job(corpus=corpus, name="Out of scope", task_type="oos_insert", settings=settings))
    log_in(page, "oona", "oona-pass-1")
    claim_by_keyboard(page, "Out of scope")

    qa_list = page.locator("#qa-pairs")
    expect(qa_list.locator("dt")).to_be_hidden()  # collapsed until opened
    qa_list.locator("summary").click()
    expect(qa_list.locator("dt")).to_have_text("Does the Alpha Hotel have a gym?")
    page.locator("#id_utterance").fill("does the alpha hotel have a gym")
    page.keyboard.press("Control+Enter")
    expect(page.get_by_role("alert")).to_contain_text("the knowledge answers this")
    page.locator("#id_utterance").fill("What is the tallest mountain in Peru?")
    page.keyboard.press("Control+Enter")
    expect_saved(page)
    assert Response.objects.get(worker=worker).answers == {"utterance": "What is the tallest mountain in Peru?"}
    assert dialogs == []


def test_question_paraphrases_are_refused_when_duplicated_and_saved_when_distinct(page, dialogs, make_annotator):
    _user, worker = make_annotator("pavel")
    pair = {"id": "faq-1", "question": "Is there free parking at the hotel?", "answer": "Yes, parking is free."}
    launch_job(create_payload_job(name="Paraphrases", task_type="qa_paraphrase", payloads=[pair], settings={"count": 3}))
    log_in(page, "pavel", "pavel-pass-1")
    claim_by_keyboard(page, "Paraphrases")

    expect(page.locator("#source-question")).to_have_text(pair["question"])
    expect(page.locator("#source-answer")).to_have_text(pair["answer"])
    page.locator("#id_paraphrase_1").fill("Can I park for free at the hotel?")
    page.locator("#id_paraphrase_2").fill("can I park for free at the hotel")
    page.locator("#id_paraphrase_3").fill("Do guests pay for parking there?")
    page.keyboard.press("Control+Enter")
    expect(page.get_by_role("alert")).to_contain_text("Paraphrase 2: (almost) the same as Paraphrase 1")
    page.locator("#id_paraphrase_2").fill("Does the hotel charge for parking?")
    page.keyboard.press("Control+Enter")
    expect_saved(page)
    answers = Response.objects.get(worker=worker).answers
    assert answers["paraphrase_2"] == "Does the hotel charge for parking?"
    assert dialogs == []
