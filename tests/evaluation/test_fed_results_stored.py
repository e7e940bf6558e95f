"""A FED set's results are computed once per state of its counted answers, in the background, and
read from there after: the page, the CSV and the API compute nothing when the answers have not
changed, agree digit for digit, and once an answer changes they show the stored results marked as
not current (on the page, on every CSV row, in the API) while new ones are computed."""
import csv
import io
import json
import re

import pytest
from django.test import Client
from django.urls import reverse

from annotation import task_types
from annotation.services.claims import claim_next_slot, submit_response
from evaluation.fed import selectors
from evaluation.fed.results import run_fed_results
from evaluation.fed.services import import_fed_static, launch_fed_job
from evaluation.models import FedResultsRun
from quorum.numbers import decimals

pytestmark = pytest.mark.django_db

CONTEXT = [{"speaker": "user", "text": "What's your favourite book?"}]
STATIC = "\n".join(
    json.dumps({"context_id": f"c{n}", "context": CONTEXT, "responses": {"alpha": f"The Hobbit, part {n}.", "beta": f"Dune, part {n}."}})
    for n in range(4)
).encode()


def rate(job, worker, fields, limit=None):
    done = 0
    while (limit is None or done < limit) and (slot := claim_next_slot(job=job, worker=worker)) is not None:
        submit_response(slot_id=slot.pk, worker=worker, answers={f["name"]: 1 + (slot.item.position + worker.pk) % 2 for f in fields})
        done += 1


def _launched_set():
    """A dialog-level set of the static lines, launched for two raters, and its rating questions."""
    fed_set = import_fed_static(name="books", jsonl=STATIC, level="dialog")
    job = launch_fed_job(fed_set, raters=2)
    return fed_set, job, [f for f in task_types.get("fed_dialog").answer_fields(job.settings) if f.get("choices")]


def _computing_fails_the_test(monkeypatch):
    monkeypatch.setattr(selectors, "fed_report", lambda *a, **k: pytest.fail("the results were computed on a request"))


def test_results_are_read_as_stored_and_agree_digit_for_digit(make_annotator, organizer, monkeypatch):
    fed_set, job, fields = _launched_set()
    for name in ("ann", "bea"):
        rate(job, make_annotator(name)[1], fields)
    assert run_fed_results(fed_set.pk)["answers"] == 16
    _computing_fails_the_test(monkeypatch)

    client = Client()
    client.force_login(organizer)
    page = client.get(reverse("evaluation:fed-set", args=[fed_set.pk])).content.decode()
    rows = list(csv.DictReader(io.StringIO(client.get(reverse("evaluation:fed-results-csv", args=[fed_set.pk])).content.decode())))
    body = client.get(reverse("evaluation-api:fed-results", args=[fed_set.pk])).json()
    assert body["answers"] == 16 and body["stale"] is False and body["note"] == "" and "note" not in rows[0]
    cells = re.findall(r"<td>(.*?)</td>", page.split('id="fed-results"')[1].split("</table>")[0])
    for system in body["results"]:
        for q in system["questions"]:
            row = next(r for r in rows if r["system"] == system["system"] and r["question"] == q["name"])
            assert row["value"] == repr(q["mean"]) and row["ci_low"] == ("" if q["low"] is None else repr(q["low"]))
            shown = f"{decimals(q['mean'])}" + (f' <span class="interval">[{decimals(q["low"])}, {decimals(q["high"])}]</span>' if q["low"] is not None else "")
            assert any(cell.startswith(shown) for cell in cells)
    assert 'id="fed-results-note"' not in page


def test_an_answer_that_changes_marks_the_stored_results_and_asks_for_new_ones(make_annotator, organizer, monkeypatch, django_capture_on_commit_callbacks):
    fed_set, job, fields = _launched_set()
    rate(job, make_annotator("ann")[1], fields)
    run_fed_results(fed_set.pk)
    rate(job, make_annotator("bea")[1], fields, limit=1)  # one more answer counts

    with monkeypatch.context() as patched:
        _computing_fails_the_test(patched)
        client = Client()
        client.force_login(organizer)
        page = client.get(reverse("evaluation:fed-set", args=[fed_set.pk])).content.decode()
        download = client.get(reverse("evaluation:fed-results-csv", args=[fed_set.pk]))
        body = client.get(reverse("evaluation-api:fed-results", args=[fed_set.pk])).json()
    note = "These results were computed from 8 counted answers; the answers have changed since (9 count now): new ones are being computed"
    assert note in page and 'id="fed-results-run"' in page
    rows = list(csv.DictReader(io.StringIO(download.content.decode())))
    assert rows and all(row["note"] == note for row in rows) and "not-current" in download["Content-Disposition"]
    assert body["stale"] is True and body["note"] == note and body["answers"] == 8 and body["results_run"]["status"] == "queued"
    assert FedResultsRun.objects.get(fed_set=fed_set).status == "queued"
    followed = client.get(reverse("evaluation:fed-results-run-progress", args=[fed_set.pk])).json()
    assert followed["status"] == "queued" and "Computing the results: queued at" in followed["html"]

    assert run_fed_results(fed_set.pk)["answers"] == 9  # the task the reads asked for
    body = client.get(reverse("evaluation-api:fed-results", args=[fed_set.pk])).json()
    assert body["stale"] is False and body["note"] == "" and body["answers"] == 9
    followed = client.get(reverse("evaluation:fed-results-run-progress", args=[fed_set.pk])).json()
    assert followed["finished"] and "New results were stored" in followed["html"]  # the page's line links to them


def test_before_any_results_are_stored_the_api_says_so_and_asks_for_them(make_annotator, organizer_api):
    fed_set, job, fields = _launched_set()
    rate(job, make_annotator("ann")[1], fields, limit=2)
    answer = organizer_api.get(reverse("evaluation-api:fed-results", args=[fed_set.pk]))
    assert answer.status_code == 409 and answer.json()["results_run"]["status"] == "queued"


def test_a_failed_computation_is_named_and_asked_again_only_once_the_answers_move(make_annotator, organizer, monkeypatch):
    fed_set, job, fields = _launched_set()
    rate(job, make_annotator("ann")[1], fields, limit=2)
    run_fed_results(fed_set.pk)
    rate(job, make_annotator("bea")[1], fields, limit=1)
    with monkeypatch.context() as patched:
        patched.setattr(selectors, "fed_report", lambda *a, **k: (_ for _ in ()).throw(ValueError("the solver gave up")))
        assert run_fed_results(fed_set.pk)["failed"] == "ValueError: the solver gave up"
    client = Client()
    client.force_login(organizer)
    page = client.get(reverse("evaluation:fed-set", args=[fed_set.pk])).content.decode()
    assert "failed: ValueError: the solver gave up" in page
    assert (
        "the answers have changed since (3 count now): they are computed again when an answer changes, "
        f"or now with Compute again on its page (manage.py fed_results {fed_set.pk})"
    ) in page
    assert FedResultsRun.objects.get(fed_set=fed_set).status == "failed"  # not asked again at every read
    rate(job, make_annotator("cid")[1], fields, limit=1)
    client.get(reverse("evaluation:fed-set", args=[fed_set.pk]))
    assert FedResultsRun.objects.get(fed_set=fed_set).status == "queued"  # an answer moved since: asked again


def test_after_a_failed_computation_the_organizer_computes_again_from_the_page(make_annotator, organizer, monkeypatch):
    fed_set, job, fields = _launched_set()
    rate(job, make_annotator("ann")[1], fields, limit=2)
    run_fed_results(fed_set.pk)
    client = Client()
    client.force_login(organizer)
    assert 'id="fed-compute"' not in client.get(reverse("evaluation:fed-set", args=[fed_set.pk])).content.decode()  # current: nothing to ask
    rate(job, make_annotator("bea")[1], fields, limit=1)
    with monkeypatch.context() as patched:
        patched.setattr(selectors, "fed_report", lambda *a, **k: (_ for _ in ()).throw(ValueError("the solver gave up")))
        run_fed_results(fed_set.pk)
    page = client.get(reverse("evaluation:fed-set", args=[fed_set.pk])).content.decode()
    assert 'id="fed-compute"' in page and "Compute the results again now" in page
    assert client.get(reverse("evaluation:fed-compute", args=[fed_set.pk])).status_code == 405  # a GET changes nothing
    asked = client.post(reverse("evaluation:fed-compute", args=[fed_set.pk]))
    assert asked.status_code == 302 and asked["Location"].endswith("#results")
    assert FedResultsRun.objects.get(fed_set=fed_set).status in ("queued", "succeeded")  # asked again, though no answer moved
    run_fed_results(fed_set.pk)
    page = client.get(reverse("evaluation:fed-set", args=[fed_set.pk])).content.decode()
    assert 'id="fed-compute"' not in page and "failed" not in page


def test_results_of_an_older_method_are_marked_and_computed_again(make_annotator, organizer_api):
    fed_set, job, fields = _launched_set()
    rate(job, make_annotator("ann")[1], fields, limit=2)
    run_fed_results(fed_set.pk)
    fed_set.results.update(method=selectors.FED_RESULTS_METHOD - 1)
    body = organizer_api.get(reverse("evaluation-api:fed-results", args=[fed_set.pk])).json()
    assert body["older_method"] is True and body["note"].startswith("These results were computed with an older method")
    assert body["results_run"]["status"] == "queued"
    run_fed_results(fed_set.pk)
    assert organizer_api.get(reverse("evaluation-api:fed-results", args=[fed_set.pk])).json()["note"] == ""
