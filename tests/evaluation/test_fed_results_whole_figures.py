"""A FED mean, its interval and each alpha travel whole in the CSV download and the API (the shortest
digits of the float, as every other Quorum download), and the set's page writes them once, by the
house rule (`quorum.numbers`, three decimals): no figure is a rounding of a rounding, and a reader
who recomputes a mean from the responses finds the same number in the file."""
import csv
import io
import json

from django.test import Client
from django.urls import reverse

from annotation import task_types
from annotation.services.claims import claim_next_slot, submit_response
from evaluation.fed.results import run_fed_results
from evaluation.fed.services import import_fed_static, launch_fed_job
from evaluation.stats.clustered_mean import clustered_mean
from quorum.numbers import decimals

CONTEXT = [{"speaker": "user", "text": "What's your favourite book?"}]
STATIC = "\n".join(json.dumps({"context_id": f"c{n}", "context": CONTEXT, "responses": {"alpha": f"The Hobbit, part {n}."}}) for n in range(6)).encode()


def test_a_fed_mean_and_its_interval_are_carried_whole_and_the_page_rounds_them_once(db, make_annotator, organizer):
    fed_set = import_fed_static(name="books", jsonl=STATIC, level="dialog")
    job = launch_fed_job(fed_set, raters=3)
    fields = [f for f in task_types.get("fed_dialog").answer_fields(job.settings) if f.get("choices")]
    values, items, raters = [], [], []
    for lift, name in enumerate(("ann", "bea", "cid")):
        worker = make_annotator(name)[1]
        while (slot := claim_next_slot(job=job, worker=worker)) is not None:
            coherent = 3 if (lift, slot.item.position) in ((2, 0), (1, 3)) else 2  # two 3s among 18: a mean of 38/18
            submit_response(slot_id=slot.pk, worker=worker, answers={**{f["name"]: list(f["choices"])[0] for f in fields}, "coherent": coherent})
            values.append(coherent)
            items.append(slot.item_id)
            raters.append(worker.pk)
    expected = clustered_mean(values, items, raters, bounds=(1, 3))
    assert expected.mean == 38 / 18 and 1 < expected.low and expected.high < 3  # an interval inside the scale

    run_fed_results(fed_set.pk)  # the background computation the answers asked for
    client = Client()
    client.force_login(organizer)
    rows = list(csv.DictReader(io.StringIO(client.get(reverse("evaluation:fed-results-csv", args=[fed_set.pk])).content.decode())))
    row = next(r for r in rows if r["statistic"] == "mean" and r["question"] == "coherent")
    assert (row["value"], row["ci_low"], row["ci_high"]) == (repr(38 / 18), repr(expected.low), repr(expected.high))
    body = client.get(reverse("evaluation-api:fed-results", args=[fed_set.pk])).json()
    coherent = next(q for q in body["results"][0]["questions"] if q["name"] == "coherent")
    assert (coherent["mean"], coherent["low"], coherent["high"]) == (38 / 18, expected.low, expected.high)

    page = client.get(reverse("evaluation:fed-set", args=[fed_set.pk])).content.decode()
    assert f"{decimals(38 / 18)} <span class=\"interval\">[{decimals(expected.low)}, {decimals(expected.high)}]" in page  # 2.111 [...]
