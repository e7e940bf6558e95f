"""A spoken reading worth a listen is a stored flag of the job's flag run, as a builder meets it:
the review queue's lead counts it and its filter finds it, the job page and the worker page name
it, the export carries its evidence (responses.csv, flags.jsonl, the README's flag table) and the
API names it; an honest reading is not flagged, and the flag rejects nothing, even in a job that
rejects flagged responses.

Recordings are made in the test run (espeak-ng, numpy); the default recogniser transcribes them."""
import csv
import json

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Response
from annotation.services.flag_runs import run_flags
from annotation.services.quality import set_quality

from .spoken_audio import speech
from .test_spoken_evidence import _cough, _job, _submit, _transcribe_all

pytestmark = [pytest.mark.django_db, pytest.mark.speech]

OTHER_SENTENCE = "The weather is lovely today and I will walk the dog in the park."


@pytest.fixture
def marked(make_annotator):
    """A job of one reading per response, its flag run done: an honest reader, one who read another
    sentence, one who coughed, and one who sent one file for both items; the job rejects flagged responses."""
    job = _job(dialogs=2)
    people = {name: make_annotator(name) for name in ("honest", "other-sentence", "cougher", "replayer")}
    _submit(job, *people["honest"], lambda turn: speech(turn.replace("I need", "I would like")))
    _submit(job, *people["other-sentence"], speech(OTHER_SENTENCE))
    _submit(job, *people["cougher"], _cough())
    replayed = speech("Could I get a cheap table somewhere nice?")
    _submit(job, *people["replayer"], replayed)
    _submit(job, *people["replayer"], replayed)
    _transcribe_all()
    set_quality(job, flags_reject=True)
    assert "failed" not in run_flags(job.pk)
    by = {name: list(Response.objects.filter(worker=worker).order_by("pk")) for name, (_user, worker) in people.items()}
    return job, by, {name: worker for name, (_user, worker) in people.items()}


def _page(organizer, name, *args, query="") -> str:
    client = Client()
    client.force_login(organizer)
    return client.get(reverse(name, args=args) + query).content.decode()


def test_marked_readings_are_flagged_with_their_evidence_and_nothing_is_rejected(marked):
    job, by, _workers = marked
    (honest,), (other,), (cough,), replays = by["honest"], by["other-sentence"], by["cougher"], by["replayer"]
    for response in Response.objects.filter(item__job=job):
        assert response.status == Response.Status.ACCEPTED  # a person listens and decides: flags_reject leaves it
    honest.refresh_from_db()
    assert "worth_a_listen" not in (honest.checks or {}).get("flags", [])
    evidence = {r.pk: (Response.objects.get(pk=r.pk).checks or {}).get("flag_evidence", {}).get("worth_a_listen", "")
                for r in (other, cough, *replays)}
    assert evidence[other.pk].startswith("reading 1: heard ") and "of the turn's 12 words" in evidence[other.pk]
    assert "s of speech in a" in evidence[other.pk] and ", WER " in evidence[other.pk]
    speech_seconds = float(evidence[cough.pk].split("reading 1: ")[1].split(" s of speech")[0].split(", ")[-1])
    assert speech_seconds < 0.5
    first, second = replays
    assert evidence[first.pk].endswith(f"the same recording as reading 1 of response {second.pk}")
    assert evidence[second.pk].endswith(f"the same recording as reading 1 of response {first.pk}")


def test_the_review_queue_counts_and_filters_them_and_the_job_and_worker_pages_name_them(marked, organizer):
    job, by, workers = marked
    marked_ids = {r.pk for name in ("other-sentence", "cougher", "replayer") for r in by[name]}
    queue = _page(organizer, "organizer:job-review", job.pk)
    assert 'data-flag="worth_a_listen">4 responses with a reading worth a listen</a>' in queue
    assert "of 5 responses carry a flag" in queue
    assert '<option value="worth_a_listen">a reading worth a listen</option>' in queue
    filtered = _page(organizer, "organizer:job-review", job.pk, query="?flag=worth_a_listen")
    shown = {r.pk for r in Response.objects.filter(item__job=job) if f'id="response-{r.pk}"' in filtered}
    assert shown == marked_ids  # the honest reader is not among them
    assert "<strong>A reading worth a listen</strong>: reading 1: " in filtered  # the stored evidence on the card
    # Stored, the page's own finding is not said twice beside it.
    assert "as this page finds them" not in filtered

    job_page = _page(organizer, "organizer:job", job.pk)
    review = reverse("organizer:job-review", args=[job.pk])
    assert f'href="{review}?flag=worth_a_listen" data-flag="worth_a_listen">4 responses with a reading worth a listen</a>' in job_page

    worker_page = _page(organizer, "organizer:worker", workers["cougher"].pk)
    assert "<strong>A reading worth a listen</strong>: 1 of 1 responses with a reading worth a listen (100%)" in worker_page
    assert "worth_a_listen" not in _page(organizer, "organizer:worker", workers["honest"].pk).replace('data-flag="worth_a_listen"', "")


def test_the_export_carries_each_flag_s_evidence(marked, tmp_path):
    from annotation.services.exports import export_job

    job, by, _workers = marked
    (cough,) = by["cougher"]
    (honest,) = by["honest"]
    export_job(job, tmp_path / "out")
    with open(tmp_path / "out" / "responses.csv", encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
        fh.seek(0)
        header = next(csv.reader(fh))
    assert header[-2:] == ["flags", "flag_evidence"]
    row = {int(r["response_id"]): r for r in rows}
    assert row[cough.pk]["flags"] == "worth_a_listen"
    assert row[cough.pk]["flag_evidence"].startswith("worth_a_listen: reading 1: ") and " s of speech in a " in row[cough.pk]["flag_evidence"]
    assert row[honest.pk]["flags"] == "" and row[honest.pk]["flag_evidence"] == ""

    records = {r["response_id"]: r for r in map(json.loads, (tmp_path / "out" / "flags.jsonl").open())}
    assert honest.pk not in records and len(records) == 4
    (flag,) = records[cough.pk]["flags"]
    assert flag["code"] == "worth_a_listen" and flag["name"] == "a reading worth a listen"
    assert flag["evidence"] == row[cough.pk]["flag_evidence"].removeprefix("worth_a_listen: ")
    readme = (tmp_path / "out" / "README.md").read_text()
    assert "| spoken_1 | `worth_a_listen`: a reading worth a listen | 4 | 4 accepted |" in readme
    assert "`flag_evidence`" in readme and "`flags.jsonl`" in readme
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["flags"]["names"] == {"worth_a_listen": "a reading worth a listen"}


def test_the_api_names_the_flag_with_its_evidence(marked, organizer_api):
    job, by, workers = marked
    (cough,) = by["cougher"]
    body = organizer_api.get(f"/api/jobs/{job.pk}/reviews/").json()
    rows = {r["response_id"]: r for r in body["responses"]}
    assert by["honest"][0].pk not in rows  # nothing to review on the honest reading
    (flag,) = rows[cough.pk]["response_flag_evidence"]
    assert flag["code"] == "worth_a_listen" and flag["name"] == "a reading worth a listen"
    assert flag["evidence"].startswith("reading 1: ") and " s of speech in a " in flag["evidence"]
    flagged = {w["worker_id"]: w for w in body["flags"]["workers"]}
    assert flagged[workers["cougher"].pk]["flags"][0]["name"] == "a reading worth a listen"
