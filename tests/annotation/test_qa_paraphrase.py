"""Question paraphrases (CGoDial QA pairs): each refusal of the checks, payloads from a file or a
DSTC9 knowledge base, per-paraphrase voting, and the QA JSONL export with its held-out split."""
import json
from io import StringIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from annotation import task_types
from annotation.models import Job, Response
from annotation.services.claims import claim_next_slot, submit_response
from annotation.services.exports import export_job
from annotation.services.jobs import JobError, launch_job
from annotation.services.payload_jobs import create_payload_job, payloads_for
from annotation.services.voting import enable_voting
from annotation.task_types.qa_paraphrase import heldout, script_of
from tests.factories import make_corpus

KIND = task_types.get("qa_paraphrase")
PAIR = {"id": "p1", "question": "Is there free parking at the hotel?", "answer": "Yes, parking is free."}
GOOD = ["Can I park for free at the hotel?", "Does the hotel offer parking without charge?", "Do guests pay for parking there?"]


def problems(answers, payload=PAIR, **settings):
    cleaned = KIND.clean_settings({"count": len(answers), **settings})
    _answers, found = KIND.validate(payload, cleaned, {f"paraphrase_{i + 1}": a for i, a in enumerate(answers)})
    return [(p.field, p.code) for p in found]


def test_good_paraphrases_pass():
    assert problems(GOOD) == []


@pytest.mark.parametrize(
    "third, code",
    [
        ("", "required"),
        ("Is there FREE parking at the hotel", "unchanged"),  # the question, case and punctuation aside
        ("Is there free parking at this hotel?", "unchanged"),  # a near-duplicate of the question
        ("can I park for free at the hotel", "duplicate"),  # the first paraphrase again
        ("Can I park for free at this hotel?", "duplicate"),  # near the first one
        ("Бесплатная ли парковка в отеле?", "script"),  # Cyrillic for a Latin question
        ("Parking?", "too_short"),
        (" ".join(["Is the parking at the hotel free"] * 4) + "?", "too_long"),
    ],
)
def test_each_refusal_names_the_paraphrase_and_what_to_fix(third, code):
    found = problems([GOOD[0], GOOD[1], third])
    assert ("paraphrase_3", code) in found
    assert all(field == "paraphrase_3" for field, _ in found)


def test_the_script_and_length_follow_a_chinese_question():
    pair = {"id": "z", "question": "酒店有免费停车场吗", "answer": "有。"}
    assert problems(["这家酒店停车免费吗", "在酒店停车要付钱吗"], payload=pair) == []
    assert ("paraphrase_2", "script") in problems(["这家酒店停车免费吗", "Is parking free?"], payload=pair)
    assert ("paraphrase_2", "too_short") in problems(["这家酒店停车免费吗", "免费吗"], payload=pair)
    assert [script_of(c) for c in "aя停ホ"] == ["LATIN", "CYRILLIC", "HAN", "KATAKANA"]


def test_the_number_of_paraphrases_is_a_setting_with_nine_by_default():
    assert [f["name"] for f in KIND.answer_fields(KIND.clean_settings({}))] == [f"paraphrase_{n}" for n in range(1, 10)]
    with pytest.raises(task_types.TaskTypeSettingsError) as caught:
        KIND.clean_settings({"count": 0, "heldout_share": 2})
    assert set(caught.value.errors) == {"count", "heldout_share"}


# --- payloads --------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_worker_reads_what_the_question_is_about(make_annotator):
    from annotation.work_tokens import make_token

    job = launch_job(create_payload_job(name="about", task_type="qa_paraphrase", payloads=[{**PAIR, "id": "a1", "about": "Birch House (hotel)"}], settings={"count": 3}))
    user, worker = make_annotator("ann")
    slot = claim_next_slot(job=job, worker=worker)
    client = Client()
    client.force_login(user)
    html = client.get(reverse("work", args=[make_token(slot)])).content.decode()
    assert '<dt>About</dt><dd id="source-about" lang="en">Birch House (hotel)</dd>' in html
    with pytest.raises(Exception, match='"about" must be a text of at most 200'):
        create_payload_job(name="long", task_type="qa_paraphrase", payloads=[{**PAIR, "id": "a2", "about": "x" * 201}])


def test_a_payload_file_names_the_bad_line():
    def error(text):
        with pytest.raises(task_types.PayloadError) as caught:
            KIND.read_payloads(text, "pairs.jsonl")
        return str(caught.value)

    line = json.dumps(PAIR)
    assert error(line + "\n" + json.dumps({**PAIR, "id": "p2", "lang": "en"})) == "pairs.jsonl line 2: unknown key(s) lang (allowed: about, answer, id, question)"
    assert error(line + "\n\n" + line) == 'pairs.jsonl line 3: the id "p1" is used twice; ids must be unique'
    assert error(json.dumps({**PAIR, "answer": " "})) == 'pairs.jsonl line 1: "answer" must be a non-empty text'
    assert error("") == 'pairs.jsonl: no QA pairs; write one JSON object {"question", "answer"} a line'
    assert KIND.read_payloads(json.dumps({**PAIR, "id": 7}), "p.jsonl") == [{**PAIR, "id": "7"}]


@pytest.mark.django_db
def test_payloads_come_from_a_dstc9_knowledge_base_or_are_asked_for():
    corpus = make_corpus()
    with pytest.raises(JobError, match="has no data to build"):
        payloads_for("qa_paraphrase", corpus=corpus)
    corpus.meta = {"knowledge": {"hotel": {"7": {"name": "Birch House", "docs": {"1": {"title": "Is breakfast included?", "body": "Yes."}}}}}}
    payloads, source = payloads_for("qa_paraphrase", corpus=corpus)
    # The entity rides along: "Is breakfast included?" means little without the hotel it asks about.
    assert payloads == [{"id": "hotel/7/1", "question": "Is breakfast included?", "answer": "Yes.", "about": "Birch House (hotel)"}]
    assert source == "corpus restaurants"
    with pytest.raises(JobError, match="not made from a payload file"):
        payloads_for("chat", text="{}")  # chats need registered systems: made on the interactive page


# --- voting and export -----------------------------------------------------------------------------


def _job(n=3, **settings):
    payloads = [{**PAIR, "id": f"p{i}"} for i in range(n)]
    return launch_job(create_payload_job(name="para", task_type="qa_paraphrase", payloads=payloads, settings={"count": 3, **settings}))


@pytest.mark.django_db
def test_voters_judge_each_paraphrase(make_annotator):
    job = _job(1)
    vote_job = enable_voting(job, votes_per_response=2, against_threshold=2)
    assert [p["name"] for p in vote_job.settings["parts"]] == ["paraphrase_1", "paraphrase_2", "paraphrase_3"]
    assert "same answer" in vote_job.settings["question"]


@pytest.mark.django_db
def test_a_voter_sees_the_question_and_votes_on_each_paraphrase(make_annotator):
    from annotation.work_tokens import make_token

    job = _job(1)
    vote_job = enable_voting(job, votes_per_response=1, against_threshold=1)
    writer = make_annotator("ann")[1]
    slot = claim_next_slot(job=job, worker=writer)
    response = submit_response(slot_id=slot.pk, worker=writer, answers={f"paraphrase_{i + 1}": q for i, q in enumerate(GOOD)})
    user, voter = make_annotator("vic")
    vote_slot = claim_next_slot(job=vote_job, worker=voter)
    client = Client()
    client.force_login(user)
    url = reverse("work", args=[make_token(vote_slot)])
    html = client.get(url).content.decode()
    assert PAIR["question"] in html and all(q in html for q in GOOD)
    assert html.count('name="vote__paraphrase_') == 3 * 2  # yes and no for each paraphrase
    votes = {"vote__paraphrase_1": "for", "vote__paraphrase_2": "against", "vote__paraphrase_3": "for"}
    assert client.post(url, votes).status_code == 302
    response.refresh_from_db()
    assert response.status != Response.Status.ACCEPTED and response.checks.get("voted_down_parts") == ["paraphrase_2"]


@pytest.mark.django_db
def test_the_export_writes_qa_pairs_with_their_sources_and_a_held_out_split(make_annotator, tmp_path):
    job = _job(6, heldout_share=0.5, seed=1)
    for name in ("ann", "bob"):
        worker = make_annotator(name)[1]
        slot = claim_next_slot(job=job, worker=worker)
        submit_response(slot_id=slot.pk, worker=worker, answers={f"paraphrase_{i + 1}": f"{name}: {q}" for i, q in enumerate(GOOD)})
    files = export_job(job, tmp_path / "out")
    assert {"qa_pairs.jsonl", "qa_pairs_heldout.jsonl", "items.csv", "responses.csv"} <= set(files)

    def read(name):
        return [json.loads(line) for line in (tmp_path / "out" / name).read_text(encoding="utf-8").splitlines()]

    train, test = read("qa_pairs.jsonl"), read("qa_pairs_heldout.jsonl")
    sources = {r["source_id"] for r in train} , {r["source_id"] for r in test}
    assert sources[0] | sources[1] == {f"p{i}" for i in range(6)} and not sources[0] & sources[1]
    assert {r["source_id"] for r in test} == {f"p{i}" for i in range(6) if heldout(f"p{i}", 1, 0.5)}
    rows = train + test
    assert sum(1 for r in rows if r["paraphrase_index"] == 0) == 6  # every source pair once
    written = [r for r in rows if r["paraphrase_index"] > 0]
    assert len(written) == 6 and {r["worker"] for r in written} == {"inhouse:ann", "inhouse:bob"}
    first = next(r for r in written if r["worker"] == "inhouse:ann" and r["paraphrase_index"] == 2)
    assert first["question"] == f"ann: {GOOD[1]}" and first["answer"] == PAIR["answer"] and first["source_question"] == PAIR["question"]
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["files"] == {"qa_pairs.jsonl": len(train), "qa_pairs_heldout.jsonl": len(test)}


@pytest.mark.django_db
def test_only_counted_paraphrases_are_exported(make_annotator, tmp_path):
    from annotation.services.response_status import transition

    job = _job(1)
    worker = make_annotator("ann")[1]
    slot = claim_next_slot(job=job, worker=worker)
    response = submit_response(slot_id=slot.pk, worker=worker, answers={f"paraphrase_{i + 1}": q for i, q in enumerate(GOOD)})
    transition(response, Response.Status.EXCLUDED, actor="reviewer", reason="test")
    export_job(job, tmp_path / "out")
    rows = [json.loads(line) for line in (tmp_path / "out" / "qa_pairs.jsonl").read_text().splitlines()]
    assert [r["paraphrase_index"] for r in rows] == [0]


# --- page and command ------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_command_makes_a_paraphrase_job_from_a_file_or_a_corpus(tmp_path):
    path = tmp_path / "pairs.jsonl"
    path.write_text("\n".join(json.dumps({**PAIR, "id": f"p{i}"}) for i in range(4)), encoding="utf-8")
    out = StringIO()
    call_command("create_job", "--name", "para", "--task-type", "qa_paraphrase", "--payloads", str(path), "--setting", "count=5", stdout=out)
    job = Job.objects.get(name="para")
    assert job.items.count() == 4 and job.settings["count"] == 5 and job.payload_set.name == "pairs.jsonl"
    path.write_text(json.dumps({"question": "Q?", "answer": "A."}), encoding="utf-8")
    with pytest.raises(CommandError, match='pairs.jsonl line 1: "id" must be a non-empty text'):
        call_command("create_job", "--name", "para 2", "--task-type", "qa_paraphrase", "--payloads", str(path))
    with pytest.raises(CommandError, match="give a payload file"):
        call_command("create_job", "--name", "para 3", "--task-type", "qa_paraphrase")


@pytest.mark.django_db
def test_the_job_page_makes_a_paraphrase_job_from_an_uploaded_file(organizer):
    client = Client()
    client.force_login(organizer)
    form = {"name": "Paraphrases", "task_type": "qa_paraphrase", "selection_mode": "all", "redundancy": 2,
            "reward": "0.20", "claim_timeout_minutes": 30, "setting__qa_paraphrase__count": "4"}
    page = client.post(reverse("organizer:job-new"), form)
    assert page.status_code == 200 and "Give a payload file" in page.content.decode()
    bad = SimpleUploadedFile("qa.jsonl", json.dumps({**PAIR, "note": "x"}).encode())
    page = client.post(reverse("organizer:job-new"), {**form, "payloads": bad})
    assert page.status_code == 200 and "qa.jsonl line 1: unknown key(s) note" in page.content.decode()
    assert not Job.objects.exists()
    good = SimpleUploadedFile("qa.jsonl", json.dumps(PAIR).encode())
    assert client.post(reverse("organizer:job-new"), {**form, "payloads": good}).status_code == 302
    job = Job.objects.get()
    assert (job.task_type, job.items.count(), job.settings["count"], job.redundancy) == ("qa_paraphrase", 1, 4, 2)
