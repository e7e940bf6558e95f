"""A FED interval that ran past the end of its scale and was cut there says so, wherever it is read:
[1.000, 3.000] on a 1-3 question is not an estimate of where the mean lies but the whole scale (too
few dialogs or raters: t with 2 degrees of freedom for 3 raters), and the page, the CSV and the API
mark it as the campaign leaderboards mark theirs."""
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

CONTEXT = [{"speaker": "user", "text": "It's raining again here."}]
STATIC = "\n".join(json.dumps({"context_id": f"c{n}", "context": CONTEXT, "responses": {"alpha": f"Tea weather {n}?"}}) for n in range(4)).encode()


def test_an_interval_cut_at_the_scale_is_marked_clipped_and_one_inside_is_not():
    items, raters = [0, 0, 1, 1, 2, 2], ["a", "b", "a", "b", "a", "b"]
    wide = clustered_mean([1, 3, 3, 1, 2, 3], items, raters, bounds=(1, 3))
    assert (wide.low, wide.high, wide.clipped) == (1, 3, True)
    inside = clustered_mean([5, 5, 5, 6, 5, 5], items, raters, bounds=(1, 9))
    assert 1 < inside.low and inside.high < 9 and inside.clipped is False
    assert clustered_mean([2, 2, 2, 3, 2, 2], items, raters).clipped is False  # no scale: nothing to cut at


def test_the_page_the_csv_and_the_api_mark_a_clipped_interval(db, make_annotator, organizer):
    fed_set = import_fed_static(name="rain", jsonl=STATIC, level="dialog")
    job = launch_fed_job(fed_set, raters=3)
    fields = [f for f in task_types.get("fed_dialog").answer_fields(job.settings) if f.get("choices")]
    for lift, name in enumerate(("ann", "bea", "cid")):
        worker = make_annotator(name)[1]
        while (slot := claim_next_slot(job=job, worker=worker)) is not None:
            answers = {f["name"]: list(f["choices"])[(slot.item.position + lift) % len(f["choices"])] for f in fields}
            coherent = 1 if (slot.item.position, lift) == (0, 0) else 3  # one No among Yeses: its interval runs past 3
            submit_response(slot_id=slot.pk, worker=worker, answers={**answers, "coherent": coherent, "overall": 3})  # overall: all agree
    run_fed_results(fed_set.pk)  # the background computation the answers asked for
    client = Client()
    client.force_login(organizer)
    body = client.get(reverse("evaluation-api:fed-results", args=[fed_set.pk])).json()
    questions = {q["name"]: q for q in body["results"][0]["questions"]}
    coherent = questions["coherent"]
    assert 1 < coherent["low"] < coherent["mean"] < coherent["high"] == 3 and coherent["ci_clipped"] is True
    assert questions["overall"]["ci_clipped"] is False

    rows = list(csv.DictReader(io.StringIO(client.get(reverse("evaluation:fed-results-csv", args=[fed_set.pk])).content.decode())))
    clipped = {r["question"]: r["ci_clipped"] for r in rows if r["statistic"] == "mean"}
    assert clipped["coherent"] == "True" and clipped["overall"] == "False"

    page = client.get(reverse("evaluation:fed-set", args=[fed_set.pk])).content.decode()
    assert ', 3.000]</span> <span class="clipped">clipped</span>' in page
    assert '[3.000, 3.000]</span> <span class="clipped">' not in page
    assert 'id="fed-clipped"' in page  # the note under the table says what a clipped interval means
