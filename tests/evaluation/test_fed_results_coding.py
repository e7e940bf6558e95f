"""Whoever reads a FED figure outside the set's page (the CSV download, the API's JSON) learns how
its question's answers are numbered: the FED paper's tables code No / Somewhat / Yes 1-3, some
loaders 0-2, and a mean of 1.75 is a different verdict on each."""
import csv
import io
import json

from django.test import Client
from django.urls import reverse

from annotation import task_types
from annotation.services.claims import claim_next_slot, submit_response
from evaluation.fed.results import run_fed_results
from evaluation.fed.services import import_fed_static, launch_fed_job

CONTEXT = [{"speaker": "user", "text": "I just adopted a cat."}]
STATIC = "\n".join(
    json.dumps({"context_id": f"c{n}", "context": CONTEXT, "responses": {"alpha": f"What is her name, {n}?", "beta": "Okay."}}) for n in range(2)
).encode()


def _rated(make_annotator):
    fed_set = import_fed_static(name="cats", jsonl=STATIC, level="turn")
    job = launch_fed_job(fed_set, raters=2)
    questions = [f for f in task_types.get("fed_turn").answer_fields(job.settings) if f.get("choices")]
    for name in ("ann", "bea"):
        worker = make_annotator(name)[1]
        while (slot := claim_next_slot(job=job, worker=worker)) is not None:
            submit_response(slot_id=slot.pk, worker=worker, answers={q["name"]: list(q["choices"])[-1] for q in questions})
    return fed_set


def test_the_csv_and_the_api_say_how_each_questions_answers_are_coded(db, make_annotator, organizer):
    fed_set = _rated(make_annotator)
    run_fed_results(fed_set.pk)  # the background computation the answers asked for
    client = Client()
    client.force_login(organizer)
    rows = list(csv.DictReader(io.StringIO(client.get(reverse("evaluation:fed-results-csv", args=[fed_set.pk])).content.decode())))
    coding = {(r["system"], r["statistic"], r["question"]): r["coding"] for r in rows}
    for system in ("alpha", "beta"):
        assert coding[(system, "mean", "interesting")] == "1 = No, 2 = Somewhat, 3 = Yes"
        assert coding[(system, "mean", "understandable")] == "1 = No, 2 = Yes"
        assert coding[(system, "mean", "overall")] == "1 = very poor, 2, 3, 4, 5 = very good"
    assert coding[("(all)", "krippendorff_alpha_ordinal", "interesting")] == "1 = No, 2 = Somewhat, 3 = Yes"

    body = client.get(reverse("evaluation-api:fed-results", args=[fed_set.pk])).json()
    interesting = next(q for q in body["results"][0]["questions"] if q["name"] == "interesting")
    assert interesting["mean"] == 3.0 and interesting["coding"] == "1 = No, 2 = Somewhat, 3 = Yes"
    assert next(a for a in body["agreement"] if a["name"] == "understandable")["coding"] == "1 = No, 2 = Yes"
