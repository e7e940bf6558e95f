"""Out-of-scope insertion (CGoDial): insertion points drawn per dialog, the checks of an inserted
turn (each refusal), the knowledge QA pairs (file, corpus knowledge, page), voting, and the `oos`
test set in each corpus format with the turn labelled out of scope."""
import json
from collections import namedtuple
from io import StringIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from annotation import task_types
from annotation.importers.jsonl import JSONLReader
from annotation.models import Corpus, Job, Response
from annotation.services.claims import claim_next_slot, submit_response
from annotation.services.exports import export_job
from annotation.services.jobs import JobError, create_job, launch_job
from annotation.services.voting import enable_voting
from annotation.task_types.out_of_scope import check_turn, insertion_points
from annotation.work_tokens import make_token
from tests.factories import make_corpus

from .test_exports import MULTIWOZ_RAW_SYSTEM, MULTIWOZ_RAW_USER, make_dialog

KIND = task_types.get("oos_insert")
Row = namedtuple("Row", "id dialog_id index speaker text slot_values dialog_external_id")
PAYLOAD = {
    "context": [{"speaker": "user", "text": "I need a cheap hotel."}, {"speaker": "system", "text": "Alpha Hotel is cheap."}],
    "next_turn": "Does it have free parking?",
    "user_turns": ["I need a cheap hotel.", "Does it have free parking?"],
    "insert_before": 2,
}
QUESTIONS = ["Is breakfast included at the hotel?", "Can I bring my dog?"]
CHECK = {"threshold": 80, "min_length": 2, "max_length": 12}


def codes(text, payload=PAYLOAD, questions=QUESTIONS, **bounds):
    return [p.code for p in check_turn(text, payload, questions, **{**CHECK, **bounds})]


# --- checks ----------------------------------------------------------------------------------------


def test_an_irrelevant_question_passes():
    assert codes("Who won the football world cup in 1998?") == []


@pytest.mark.parametrize(
    "text, code",
    [
        ("", "required"),
        ("Why?", "too_short"),
        ("one two three four five six seven eight nine ten eleven twelve thirteen", "too_long"),
        ("alpha hotel is CHEAP!", "copy"),  # the system's turn again, case and punctuation aside
        ("I need a cheap hotel", "copy"),
        ("I need a cheap hotel room.", "in_scope_turn"),  # near a user turn of the dialog
        ("Is breakfast included in the hotel?", "in_scope_question"),  # near a knowledge question
        ("By the way, can I bring my dog? Thanks", "in_scope_question"),  # quoted inside the turn
    ],
)
def test_each_refusal_says_what_to_fix(text, code):
    problems = check_turn(text, PAYLOAD, QUESTIONS, **CHECK)
    assert code in [p.code for p in problems]
    assert all(p.field == "utterance" and p.message.startswith("Out-of-scope user turn:") for p in problems)


def test_lengths_count_characters_in_chinese():
    payload = {"context": [], "next_turn": "我想订一家便宜的酒店", "user_turns": ["我想订一家便宜的酒店"]}
    assert codes("今天天气怎么样", payload, [], min_length=3, max_length=20) == []
    assert codes("天气", payload, [], min_length=3, max_length=20) == ["too_short"]


def test_the_form_refuses_text_that_is_not_text():
    _cleaned, problems = KIND.validate(PAYLOAD, KIND.clean_settings({}), {"utterance": ["a list"]})
    assert [p.code for p in problems] == ["type"]


def test_the_qa_pairs_of_the_job_are_what_the_check_reads():
    settings = KIND.clean_settings({"qa_pairs": [{"question": "Is there a gym?", "answer": "Yes."}]})
    _cleaned, problems = KIND.validate(PAYLOAD, settings, {"utterance": "Is there a gym?"})
    assert [p.code for p in problems] == ["in_scope_question"]
    assert "Is there a gym?" in problems[0].message


# --- settings --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "given, name",
    [
        ({"insert_probability": 1.5}, "insert_probability"),
        ({"max_per_dialog": 0}, "max_per_dialog"),
        ({"default_answer": "  "}, "default_answer"),
        ({"min_length": 5, "max_length": 3}, "max_length"),
        ({"qa_pairs": [{"question": "Q?", "answer": "A.", "source": "x"}]}, "qa_pairs"),
        ({"qa_pairs": [{"question": "", "answer": "A."}]}, "qa_pairs"),
    ],
)
def test_bad_settings_are_refused_by_name(given, name):
    with pytest.raises(task_types.TaskTypeSettingsError) as caught:
        KIND.clean_settings(given)
    assert name in caught.value.errors


def test_a_qa_pairs_file_names_the_bad_line():
    text = '{"question": "Is there a gym?", "answer": "Yes."}\n\n{"question": "Wifi?", "answr": "Free."}\n'
    with pytest.raises(task_types.TaskTypeSettingsError) as caught:
        KIND.read_setting_file("qa_pairs", text, "pairs.jsonl")
    assert caught.value.errors["qa_pairs"] == "pairs.jsonl line 3: unknown key(s) answr (allowed: answer, question)"
    with pytest.raises(task_types.TaskTypeSettingsError, match="line 1: not valid JSON"):
        KIND.read_setting_file("qa_pairs", "{nope", "pairs.jsonl")
    assert KIND.read_setting_file("qa_pairs", text.splitlines()[0], "p.jsonl") == [{"question": "Is there a gym?", "answer": "Yes."}]


# --- insertion points ------------------------------------------------------------------------------


def _rows(dialogs=40, user_turns=3):
    rows, turn_id = [], 0
    for d in range(dialogs):
        for t in range(2 * user_turns):
            turn_id += 1
            rows.append(Row(turn_id, d, t, "user" if t % 2 == 0 else "system", f"d{d} t{t}", [], f"d{d}"))
    return rows


def test_insertion_points_are_reproducible_and_follow_the_settings():
    rows = _rows()
    first = list(insertion_points(rows, probability=0.6, max_per_dialog=2, seed=7))
    again = list(insertion_points(rows, probability=0.6, max_per_dialog=2, seed=7))
    other = list(insertion_points(rows, probability=0.6, max_per_dialog=2, seed=8))
    assert first == again and first != other
    # The same corpus imported again: other rows, the same dialogs in its file, the same points.
    reimported = [row._replace(id=row.id + 1000, dialog_id=row.dialog_id + 500) for row in rows]
    assert [(p.index, p.next_turn) for p in insertion_points(reimported, probability=0.6, max_per_dialog=2, seed=7)] == [
        (p.index, p.next_turn) for p in first
    ]
    per_dialog = {}
    for point in first:
        per_dialog.setdefault(point.context[0]["text"].split()[0] if point.context else point.next_turn.split()[0], []).append(point)
    assert all(1 <= len(points) <= 2 for points in per_dialog.values())
    assert 0.3 < len(per_dialog) / 40 < 0.9  # about 0.6 of the dialogs
    assert all(p.next_turn.endswith(("t0", "t2", "t4")) for p in first)  # always before a user turn
    point = first[0]
    assert [t["text"] for t in point.context] == [f"{point.next_turn.split()[0]} t{i}" for i in range(point.index)]
    assert list(insertion_points(rows, probability=0.0, max_per_dialog=2, seed=7)) == []
    assert len({p.context[0]["text"][:3] if p.context else p.next_turn[:3] for p in insertion_points(rows, probability=1.0, max_per_dialog=1, seed=7)}) == 40


# --- jobs, page, voting ----------------------------------------------------------------------------

KNOWLEDGE = {"hotel": {"7": {"name": "Birch House", "docs": {"1": {"title": "Is breakfast included?", "body": "Yes, a continental breakfast."}}}}}


@pytest.mark.django_db
def test_a_dstc9_corpus_gives_its_faq_documents_as_the_qa_pairs():
    corpus = make_corpus(dialogs=3)
    Corpus.objects.filter(pk=corpus.pk).update(meta={"knowledge": KNOWLEDGE})
    corpus.refresh_from_db()
    job = create_job(corpus=corpus, name="oos", task_type="oos_insert", settings={"insert_probability": 1.0})
    assert job.settings["qa_pairs"] == [{"question": "Is breakfast included?", "answer": "Yes, a continental breakfast."}]
    assert 3 <= job.items.count() <= 6
    given = [{"question": "Is there a gym?", "answer": "No."}]
    job = create_job(corpus=corpus, name="oos 2", task_type="oos_insert", settings={"insert_probability": 1.0, "qa_pairs": given})
    assert job.settings["qa_pairs"] == given


@pytest.mark.django_db
def test_a_selection_where_no_dialog_is_drawn_is_refused_and_writes_nothing():
    with pytest.raises(JobError, match="no turns"):
        create_job(corpus=make_corpus(dialogs=2), name="none", task_type="oos_insert", settings={"insert_probability": 0.0})
    assert not Job.objects.exists()


@pytest.mark.django_db
def test_the_page_lists_the_qa_pairs_collapsed_and_refuses_an_in_scope_turn(make_annotator):
    user, worker = make_annotator("ola")
    qa = [{"question": "Is there parking at the hotel?", "answer": "Yes, free."}]
    job = launch_job(create_job(corpus=make_corpus(dialogs=1), name="oos", task_type="oos_insert",
                                settings={"insert_probability": 1.0, "max_per_dialog": 1, "qa_pairs": qa}))
    slot = claim_next_slot(job=job, worker=worker)
    client = Client()
    client.force_login(user)
    url = reverse("work", args=[make_token(slot)])
    html = client.get(url).content.decode()
    assert '<details id="qa-pairs">' in html and "Is there parking at the hotel?" in html
    assert "I am sorry, I do not know that" in html and slot.item.payload["next_turn"] in html
    refused = client.post(url, {"utterance": "is there parking at the hotel"})
    assert refused.status_code == 400 and "the knowledge answers this" in refused.content.decode()
    assert client.post(url, {"utterance": "What is the tallest mountain in Peru?"}).status_code == 302
    assert Response.objects.get(slot=slot).answers == {"utterance": "What is the tallest mountain in Peru?"}


@pytest.mark.django_db
def test_voters_are_asked_whether_the_turn_is_out_of_scope(make_annotator):
    job = launch_job(create_job(corpus=make_corpus(dialogs=1), name="oos", task_type="oos_insert", settings={"insert_probability": 1.0}))
    vote_job = enable_voting(job, votes_per_response=2, against_threshold=2)
    assert "out of scope" in vote_job.settings["question"] and vote_job.settings["parts"] == []
    worker = make_annotator("w")[1]
    slot = claim_next_slot(job=job, worker=worker)
    response = submit_response(slot_id=slot.pk, worker=worker, answers={"utterance": "Do penguins have knees?"})
    assert response.status == Response.Status.AWAITING_REVIEW
    assert vote_job.items.get().payload["shown"] == [{"name": "utterance", "label": "Out-of-scope user turn", "text": "Do penguins have knees?"}]


# --- export ----------------------------------------------------------------------------------------


def _answered_job(corpus, make_annotator, settings=None):
    job = launch_job(create_job(corpus=corpus, name="oos", task_type="oos_insert",
                                settings={"insert_probability": 1.0, "max_per_dialog": 1, **(settings or {})}))
    worker = make_annotator("writer")[1]
    while (slot := claim_next_slot(job=job, worker=worker)) is not None:
        submit_response(slot_id=slot.pk, worker=worker, answers={"utterance": f"Do penguins have knees {slot.item.position}?"})
    return job


@pytest.mark.django_db
def test_the_jsonl_export_inserts_the_labelled_turn_and_the_default_answer_and_imports_again(make_annotator, tmp_path):
    corpus = make_corpus(dialogs=2, user_turns=2)
    job = _answered_job(corpus, make_annotator, {"default_answer": "Sorry, no idea."})
    files = export_job(job, tmp_path / "out")
    assert "oos/dialogs.jsonl" in files
    lines = (tmp_path / "out" / "oos" / "dialogs.jsonl").read_text(encoding="utf-8").splitlines()
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["out_of_scope"]["default_answer"] == "Sorry, no idea."
    for line, entry in zip(lines, manifest["dialogs"], strict=False):
        turns = json.loads(line)["turns"]
        assert len(turns) == 4 + 2
        (before,) = entry["replaced"]["oos"]
        inserted = turns[before]
        assert inserted["speaker"] == "user" and inserted["oos"] is True and inserted["text"].startswith("Do penguins")
        assert turns[before + 1] == {"speaker": "system", "text": "Sorry, no idea.", "slot_values": []}
        assert [t["speaker"] for t in turns] == ["user", "system"] * 3
        assert sum(1 for t in turns if t.get("oos")) == 1
    path = tmp_path / "out" / "oos" / "dialogs.jsonl"
    with JSONLReader({"data": path}) as reader:
        dialogs = list(reader.dialogs())
    assert [t.raw for t in dialogs[0].turns].count({"oos": True}) == 1  # the label survives an import


@pytest.mark.django_db
def test_the_multiwoz_export_labels_the_turn_and_keeps_the_belief_state(make_annotator, tmp_path):
    corpus = Corpus.objects.create(name="mw", source_format="multiwoz")
    make_dialog(corpus, "PMUL1.json", 0, [
        ("user", "I want a cheap place in the centre.", MULTIWOZ_RAW_USER),
        ("system", "What food?", MULTIWOZ_RAW_SYSTEM),
        ("user", "Any food in the centre.", MULTIWOZ_RAW_USER),
        ("system", "Golden Wok.", MULTIWOZ_RAW_SYSTEM),
    ], meta={"goal": {"restaurant": {}}})
    job = _answered_job(corpus, make_annotator, {"seed": 3})
    export_job(job, tmp_path / "out")
    log = json.loads((tmp_path / "out" / "oos" / "data.json").read_text())["PMUL1.json"]["log"]
    assert len(log) == 6
    (at,) = [i for i, turn in enumerate(log) if turn.get("oos")]
    assert at % 2 == 0  # still a user (even) position
    assert log[at]["dialog_act"] == {"general-oos": [["none", "none"]]} and log[at]["metadata"] == {}
    reply = log[at + 1]
    assert reply["text"] == "I am sorry, I do not know that"
    assert reply["metadata"] == (MULTIWOZ_RAW_SYSTEM["metadata"] if at > 0 else {})


@pytest.mark.django_db
@pytest.mark.parametrize("source_format, file_name", [("dstc9", "logs.json"), ("dstc6", "dialogs.json")])
def test_dstc_exports_label_the_turn(make_annotator, tmp_path, source_format, file_name):
    corpus = make_corpus(dialogs=1, user_turns=2, source_format=source_format)
    job = _answered_job(corpus, make_annotator)
    export_job(job, tmp_path / "out")
    data = json.loads((tmp_path / "out" / "oos" / file_name).read_text())
    if source_format == "dstc9":
        turns = data[0]
        (at,) = [i for i, t in enumerate(turns) if t.get("oos")]
        assert turns[at]["speaker"] == "U" and turns[at + 1] == {"speaker": "S", "text": "I am sorry, I do not know that"}
    else:
        (at,) = data[0]["oos_turns"]
        assert data[0]["utterances"][at].startswith("Do penguins") and data[0]["utterances"][at + 1] == "I am sorry, I do not know that"


# --- creating the job from the page and the command --------------------------------------------------


@pytest.mark.django_db
def test_the_command_reads_the_qa_pairs_file_and_names_a_bad_line(tmp_path):
    make_corpus(name="hotels", dialogs=2)
    good = tmp_path / "pairs.jsonl"
    good.write_text('{"question": "Is there a gym?", "answer": "No."}\n', encoding="utf-8")
    out = StringIO()
    call_command("create_job", "hotels", "--name", "oos", "--task-type", "oos_insert", "--qa-pairs", str(good),
                 "--setting", "insert_probability=1.0", stdout=out)
    assert Job.objects.get(name="oos").settings["qa_pairs"] == [{"question": "Is there a gym?", "answer": "No."}]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "Is there a gym?"}\n', encoding="utf-8")
    with pytest.raises(CommandError, match='--qa-pairs: bad.jsonl line 1: "answer" must be a non-empty text'):
        call_command("create_job", "hotels", "--name", "oos 2", "--task-type", "oos_insert", "--qa-pairs", str(bad))
    with pytest.raises(CommandError, match="--qa-pairs: task type 'rewrite' takes no qa pairs"):
        call_command("create_job", "hotels", "--name", "oos 3", "--qa-pairs", str(good))


@pytest.mark.django_db
def test_the_job_page_creates_an_oos_job_with_an_uploaded_qa_file(organizer):
    corpus = make_corpus(name="hotels", dialogs=2)
    client = Client()
    client.force_login(organizer)
    form = {"corpus": corpus.pk, "name": "OOS", "task_type": "oos_insert", "selection_mode": "all", "redundancy": 1,
            "reward": "0.20", "claim_timeout_minutes": 30, "setting__oos_insert__insert_probability": "1"}
    bad = SimpleUploadedFile("qa.jsonl", b'{"question": "Gym?", "answer": "No.", "extra": 1}\n')
    page = client.post(reverse("organizer:job-new"), {**form, "setting__oos_insert__qa_pairs": bad})
    assert page.status_code == 200 and "qa.jsonl line 1: unknown key(s) extra" in page.content.decode()
    assert not Job.objects.exists()
    good = SimpleUploadedFile("qa.jsonl", b'{"question": "Gym?", "answer": "No."}\n{"question": "Pool?", "answer": "Yes."}\n')
    assert client.post(reverse("organizer:job-new"), {**form, "setting__oos_insert__qa_pairs": good}).status_code == 302
    job = Job.objects.get()
    assert job.settings["qa_pairs"] == [{"question": "Gym?", "answer": "No."}, {"question": "Pool?", "answer": "Yes."}]
    page = client.get(reverse("organizer:job", args=[job.pk])).content.decode()
    assert "<code>qa_pairs</code>: 2 entries" in page and "Pool?" not in page  # counted, not dumped
    assert 'id="job-notes"' not in page  # the knowledge check has its questions: nothing to say


def oos_form(corpus) -> dict:
    return {"corpus": corpus.pk, "name": "OOS", "task_type": "oos_insert", "selection_mode": "all", "redundancy": 1,
            "reward": "0.20", "claim_timeout_minutes": 30, "setting__oos_insert__insert_probability": "1"}


NOTE_START = "No knowledge QA pairs: the corpus has no DSTC9 knowledge and no QA-pairs file was given"


@pytest.mark.django_db
def test_an_oos_job_without_knowledge_or_qa_pairs_tells_the_builder_what_is_not_checked(organizer):
    corpus = make_corpus(name="hotels", dialogs=2)
    client = Client()
    client.force_login(organizer)
    page = client.post(reverse("organizer:job-new"), oos_form(corpus), follow=True).content.decode()
    assert page.count(NOTE_START) == 2  # with the message that the job was created, and on the job page
    assert "a turn is not checked against the knowledge, only against the dialog&#x27;s own user turns" in page
    assert 'id="job-notes"' in page
    job = Job.objects.get()
    assert KIND.answer_fields(job.settings)[0]["help"].endswith("meaningless sentence. Not a repeat of the dialog.")


@pytest.mark.django_db
def test_the_api_job_carries_the_note_only_without_qa_pairs(organizer_api):
    corpus = make_corpus(name="hotels", dialogs=2)
    body = {"corpus": corpus.pk, "name": "OOS", "task_type": "oos_insert", "settings": {"insert_probability": 1}}
    accepted = organizer_api.post("/api/jobs/", body, format="json")
    assert accepted.status_code == 202  # made in the background (here, in the call): the run names the job
    bare = organizer_api.get(accepted.data["job_url"])
    # The knowledge note, then the English default answer's (test_oos_default_answer_language.py).
    assert len(bare.data["notes"]) == 2 and bare.data["notes"][0].startswith(NOTE_START)
    body = {**body, "name": "OOS 2", "settings": {"insert_probability": 1, "qa_pairs": [{"question": "Gym?", "answer": "No."}]}}
    assert organizer_api.get(organizer_api.post("/api/jobs/", body, format="json").data["job_url"]).data["notes"] == []


@pytest.mark.django_db
def test_a_reimported_dstc6_set_keeps_its_labels_in_a_rewrite_export(make_annotator, tmp_path):
    from annotation.models import Dialog

    corpus = make_corpus(dialogs=1, user_turns=2, source_format="dstc6")
    Dialog.objects.filter(corpus=corpus).update(meta={"candidates": [], "oos_turns": [2]})
    job = launch_job(create_job(corpus=corpus, name="rewrite"))
    export_job(job, tmp_path / "out")
    assert json.loads((tmp_path / "out" / "paraphrase" / "dialogs.json").read_text())[0]["oos_turns"] == [2]
