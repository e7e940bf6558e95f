"""What an organizer reads on a FED set's page once raters have answered: the results table of a
turn-level set (nine questions) fits a desktop window, its columns named as the raters read them."""
import json

import pytest
from playwright.sync_api import expect

from annotation import task_types
from annotation.services.claims import claim_next_slot, submit_response
from evaluation.fed.services import import_fed_static, launch_fed_job, review_candidate
from evaluation.models import FedCandidate

from .test_accessibility import _violations, _width

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CONTEXT = [{"speaker": "user", "text": "It's raining again here."}]
LINES = [
    {"context_id": f"c{n}", "context": CONTEXT, "responses": {"alpha": f"Tea weather, number {n}?", "beta": "Okay.", "gamma": "Rain is water."}}
    for n in range(3)
]


def _answered_set(make_annotator, level="turn"):
    """A static FED set of three systems, rated by three raters, each a little more lenient; what the
    offensive-word filter flagged is kept first."""
    fed_set = import_fed_static(name="Rainy replies", jsonl="\n".join(json.dumps(line) for line in LINES).encode(), level=level)
    for candidate in FedCandidate.objects.filter(fed_set=fed_set, review="pending"):
        review_candidate(candidate, keep=True)
    job = launch_fed_job(fed_set, raters=3)
    questions = [f for f in task_types.get(job.task_type).answer_fields(job.settings) if f.get("choices")]
    for lift, name in enumerate(("ria", "rob", "rue")):
        worker = make_annotator(name)[1]
        while (slot := claim_next_slot(job=job, worker=worker)) is not None:
            answers = {q["name"]: list(q["choices"])[min(len(q["choices"]) - 1, (slot.item.position + lift) % len(q["choices"]))] for q in questions}
            submit_response(slot_id=slot.pk, worker=worker, answers=answers)
    return fed_set, questions


def test_the_turn_level_results_fit_a_desktop_window_with_the_questions_named(page, organizer_login, make_annotator):
    fed_set, questions = _answered_set(make_annotator)
    page.set_viewport_size({"width": 1280, "height": 900})
    organizer_login(f"/evaluation/fed/{fed_set.pk}/")
    results = page.locator("#fed-results")
    expect(results).to_contain_text("gamma")
    assert _width(page) <= 1280  # nine questions: the table scrolls in its own box, not the page
    for q in questions:  # the columns say what the raters were asked, not the field names
        expect(results.get_by_role("columnheader", name=q["label"], exact=True)).to_have_count(1)
    assert _violations(page) == []  # the scroll box is reachable by keyboard and named


def test_once_answers_are_in_the_set_page_leads_with_the_results_on_a_phone(page, organizer_login, make_annotator, settings):
    # Two responses were flagged and kept before the launch: the decided review queue stays on the
    # page, below what the organizer comes back for.
    settings.QUORUM_OFFENSIVE_WORDS = ["rain"]
    fed_set, _questions = _answered_set(make_annotator)
    assert FedCandidate.objects.filter(fed_set=fed_set, review="kept").count() >= 2
    page.set_viewport_size({"width": 390, "height": 844})
    organizer_login(f"/evaluation/fed/{fed_set.pk}/")
    results = page.get_by_role("heading", name="Results", exact=True)
    expect(results).to_be_in_viewport()  # the first screen shows the results, not the settled review queue
    assert results.bounding_box()["y"] < page.locator("#review").bounding_box()["y"]
    assert _width(page) <= 390


def test_a_turn_level_sets_results_say_they_are_clustered_by_response_not_dialog(page, organizer_login, make_annotator):
    # At turn level each rated item is a response in its context: the reader is told what was resampled.
    fed_set, _questions = _answered_set(make_annotator, level="turn")
    organizer_login(f"/evaluation/fed/{fed_set.pk}/")
    method = page.locator("#fed-results-method")
    expect(method).to_contain_text("clustered by response and by rater")
    expect(method).to_contain_text("min(responses, raters) − 1 degrees of freedom")
    expect(method).not_to_contain_text("dialog")
