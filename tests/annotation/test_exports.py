"""Exports of a rewrite job: test sets in each source format, the raw CSV, background runs, the command.

Source rows are built directly with the ORM, shaped as the importers store them.
"""
import csv
import io
import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.exporters import ExportError
from annotation.exporters.multiwoz import MultiwozWriter
from annotation.models import Corpus, Dialog, ExportRun, Item, Job, Response, RunStatus, Slot, Turn, Worker
from annotation.services.exports import export_job, run_export, start_export

pytestmark = pytest.mark.django_db

VARIANTS = ["paraphrase", "typos", "verbose", "simplified"]
T0 = timezone.now().replace(microsecond=0) - timedelta(days=1)
TRICKY = 'He said "no, thanks",\nthen <script>alert(1)</script> left; 5€, naïve, 予約'

MULTIWOZ_RAW_USER = {
    "metadata": {},
    "dialog_act": {"Restaurant-Inform": [["Price", "cheap"], ["Area", "centre"]]},
    "span_info": [["Restaurant-Inform", "Price", "cheap", 4, 4], ["Restaurant-Inform", "Area", "centre", 8, 8]],
}
MULTIWOZ_RAW_SYSTEM = {
    "metadata": {"restaurant": {"book": {"booked": [], "people": ""}, "semi": {"pricerange": "cheap", "area": "centre"}}},
    "dialog_act": {"Restaurant-Request": [["Food", "?"]]},
    "span_info": [],
}


# --- builders ---------------------------------------------------------------------------------------


def make_dialog(corpus, external_id, position, turns, meta=None):
    """turns: [(speaker, text, raw)]"""
    dialog = Dialog.objects.create(corpus=corpus, external_id=external_id, position=position, meta=meta or {})
    for index, (speaker, text, raw) in enumerate(turns):
        Turn.objects.create(
            dialog=dialog,
            index=index,
            speaker=speaker,
            text=text,
            raw=raw,
            slot_values=[{"slot": "area", "value": "centre"}] if speaker == "user" else [],
        )
    return dialog


def make_job(corpus, variants=None, task_type="rewrite", user_turns_of=None):
    """A job with one item per user turn of the given dialogs (all dialogs of the corpus by default)."""
    settings = {"variants": variants} if variants else {}
    job = Job.objects.create(name="rewrites", corpus=corpus, task_type=task_type, settings=settings, redundancy=3)
    dialogs = user_turns_of if user_turns_of is not None else list(corpus.dialogs.all())
    turns = Turn.objects.filter(dialog__in=dialogs, speaker="user").order_by("dialog__position", "index")
    for position, turn in enumerate(turns):
        Item.objects.create(job=job, turn=turn, position=position, payload={"utterance": turn.text})
    return job


def item_for(job, dialog, index):
    return Item.objects.get(job=job, turn__dialog=dialog, turn__index=index)


def respond(item, name, status="accepted", minutes=0, answers=None, tag=None, checks=None, active_seconds=42.5):
    """A response by worker `name` submitted `minutes` after T0; answers default to '<tag> <variant>'."""
    worker, _ = Worker.objects.get_or_create(provider="prolific", external_id=name)
    index = Slot.objects.filter(item=item).count()
    slot = Slot.objects.create(
        item=item, job=item.job, index=index, position=item.position, state="submitted", worker=worker,
        claimed_at=T0 + timedelta(minutes=minutes) - timedelta(seconds=90),
    )
    tag = tag or name
    response = Response.objects.create(
        slot=slot,
        item=item,
        worker=worker,
        answers=answers if answers is not None else {v: f"{tag} {v}" for v in VARIANTS},
        checks=checks if checks is not None else {"passed": True, "problems": []},
        status=status,
        claimed_at=slot.claimed_at,
        active_seconds=active_seconds,
    )
    # submitted_at is auto_now_add: set the time the test needs afterwards.
    Response.objects.filter(pk=response.pk).update(submitted_at=T0 + timedelta(minutes=minutes))
    response.refresh_from_db()
    return response


def read_json(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def read_csv(path: Path):
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


# --- MultiWOZ -----------------------------------------------------------------------------------------


@pytest.fixture
def multiwoz():
    corpus = Corpus.objects.create(name="mwoz", source_format="multiwoz")
    goal = {"restaurant": {"info": {"pricerange": "cheap", "area": "centre"}}, "message": ["<span>cheap</span>"]}
    d1 = make_dialog(
        corpus,
        "SNG0001.json",
        0,
        [
            ("user", "I want a cheap place in the centre.", MULTIWOZ_RAW_USER),
            ("system", "What food would you like?", MULTIWOZ_RAW_SYSTEM),
            ("user", "Thai food in the centre, please.", MULTIWOZ_RAW_USER),
            ("system", "Lotus Corner serves Thai food.", MULTIWOZ_RAW_SYSTEM),
        ],
        meta={"goal": goal},
    )
    d2 = make_dialog(
        corpus, "PMUL0002.json", 1,
        [("user", "A hotel in the centre.", MULTIWOZ_RAW_USER), ("system", "Birch House?", MULTIWOZ_RAW_SYSTEM)],
        meta={"goal": {"hotel": {}}},
    )
    d3 = make_dialog(corpus, "MUL0003.json", 2, [("user", "Not in the job, centre.", MULTIWOZ_RAW_USER)], meta={"goal": {}})
    job = make_job(corpus, user_turns_of=[d1, d2])
    return corpus, job, d1, d2, d3


def test_multiwoz_test_set_replaces_the_user_turn_with_the_earliest_accepted_rewrite(multiwoz, tmp_path):
    corpus, job, d1, d2, _ = multiwoz
    first = item_for(job, d1, 0)
    respond(first, "late", minutes=30)
    respond(first, "early", minutes=10)  # created after "late" but submitted before it: this one wins
    respond(first, "rejected", status="rejected", minutes=1)
    respond(first, "soft", status="excluded", minutes=2)
    respond(item_for(job, d1, 2), "pending", status="awaiting_review", minutes=3)  # under vote: not used
    respond(item_for(job, d2, 0), "d2worker", minutes=5)

    out = tmp_path / "export"
    files = export_job(job, out)

    assert set(files) == {f"{v}/data.json" for v in VARIANTS} | {"responses.csv", "flags.jsonl", "worker_reliability.csv", "manifest.json", "README.md"}
    for variant in VARIANTS:
        data = read_json(out / variant / "data.json")
        assert list(data) == ["SNG0001.json", "PMUL0002.json"]  # the dialog without items is left out
        log = data["SNG0001.json"]["log"]
        assert data["SNG0001.json"]["goal"] == d1.meta["goal"]
        assert log[0]["text"] == f"early {variant}"
        assert {k: v for k, v in log[0].items() if k not in ("text", "span_info")} == {
            k: v for k, v in MULTIWOZ_RAW_USER.items() if k != "span_info"}
        assert log[0]["span_info"] == []  # the rewrite holds neither value: no span is given a wrong place
        assert log[1] == {"text": "What food would you like?", **MULTIWOZ_RAW_SYSTEM}
        assert log[2]["text"] == "Thai food in the centre, please."
        assert log[3] == {"text": "Lotus Corner serves Thai food.", **MULTIWOZ_RAW_SYSTEM}
        assert data["PMUL0002.json"]["log"][0]["text"] == f"d2worker {variant}"
        assert set(data["SNG0001.json"]) == {"goal", "log"}

    manifest = read_json(out / "manifest.json")
    assert manifest["job"]["id"] == job.id and manifest["corpus"]["name"] == "mwoz"
    assert manifest["job"]["settings"] == job.settings
    assert manifest["quorum_version"] and manifest["exported_at"]
    assert manifest["variants"]["typos"] == {
        "turns_replaced": 2, "turns_without_accepted_rewrite": 1, "span_info_moved": 0, "span_info_dropped": 4,
    }
    sng = next(d for d in manifest["dialogs"] if d["dialog_id"] == "SNG0001.json")
    assert sng["item_turns"] == [0, 2] and sng["replaced"]["paraphrase"] == [0]
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert "span_info" in readme and "earliest accepted" in readme
    # Nothing but the export itself was left in the parent directory.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export"]


def test_variants_follow_the_job_settings(multiwoz, tmp_path):
    corpus, _, d1, d2, _ = multiwoz
    job = make_job(corpus, variants=["paraphrase", "simplified"], user_turns_of=[d1])
    respond(item_for(job, d1, 0), "ann", answers={"paraphrase": "Cheap, centre, please.", "simplified": "cheap centre"})
    files = export_job(job, tmp_path / "out")
    assert sorted(p.name for p in (tmp_path / "out").iterdir() if p.is_dir()) == ["paraphrase", "simplified"]
    assert "typos/data.json" not in files
    assert read_json(tmp_path / "out" / "simplified" / "data.json")["SNG0001.json"]["log"][0]["text"] == "cheap centre"
    header = read_csv(tmp_path / "out" / "responses.csv")[0].keys()
    assert "typos" not in header and "paraphrase" in header and "simplified" in header


# --- DSTC9 --------------------------------------------------------------------------------------------


def test_dstc9_logs_with_aligned_labels_and_knowledge(tmp_path):
    knowledge = {"hotel": {"7": {"name": "Birch House", "docs": {"2": {"title": "Pets?", "body": "Dogs welcome."}}}}}
    corpus = Corpus.objects.create(name="dstc9", source_format="dstc9", meta={"knowledge": knowledge})
    label_a = {"target": True, "knowledge": [{"domain": "hotel", "entity_id": 7, "doc_id": 2}], "response": "Dogs are fine."}
    a = make_dialog(
        corpus, "0", 0,
        [("user", "A place in the north?", {}), ("system", "Birch House.", {}), ("user", "Can I bring my dog?", {})],
        meta={"label": label_a},
    )
    skipped = make_dialog(corpus, "1", 1, [("user", "Not in the job.", {})], meta={"label": {"target": False}})
    b = make_dialog(corpus, "2", 2, [("user", "Table for 2 tonight.", {})], meta={"label": {"target": False}})
    job = make_job(corpus, user_turns_of=[a, b])
    respond(item_for(job, a, 2), "ann", minutes=1)

    out = tmp_path / "out"
    files = export_job(job, out)

    assert "paraphrase/labels.json" in files and "paraphrase/knowledge.json" in files
    logs = read_json(out / "verbose" / "logs.json")
    assert logs == [
        [
            {"speaker": "U", "text": "A place in the north?"},
            {"speaker": "S", "text": "Birch House."},
            {"speaker": "U", "text": "ann verbose"},
        ],
        [{"speaker": "U", "text": "Table for 2 tonight."}],
    ]
    assert read_json(out / "verbose" / "labels.json") == [label_a, b.meta["label"]]
    assert read_json(out / "verbose" / "knowledge.json") == knowledge
    assert skipped.external_id not in json.dumps(read_json(out / "manifest.json")["dialogs"])


def test_dstc9_without_labels_or_knowledge_writes_logs_only(tmp_path):
    corpus = Corpus.objects.create(name="dstc9-bare", source_format="dstc9")
    dialog = make_dialog(corpus, "0", 0, [("user", "Any parking?", {})])
    job = make_job(corpus)
    respond(item_for(job, dialog, 0), "ann")
    files = export_job(job, tmp_path / "out")
    assert [f for f in files if f.startswith("typos/")] == ["typos/logs.json"]


def test_dstc9_with_labels_on_some_instances_only_fails_cleanly(tmp_path):
    corpus = Corpus.objects.create(name="dstc9-mixed", source_format="dstc9")
    make_dialog(corpus, "0", 0, [("user", "Any parking?", {})], meta={"label": {"target": False}})
    make_dialog(corpus, "1", 1, [("user", "Any wifi?", {})])
    job = make_job(corpus)
    with pytest.raises(ExportError, match="labels.json"):
        export_job(job, tmp_path / "out")
    assert list(tmp_path.iterdir()) == []


# --- DSTC6 and JSONL ----------------------------------------------------------------------------------


def test_dstc6_utterances_candidates_and_other_fields(tmp_path):
    corpus = Corpus.objects.create(name="dstc6", source_format="dstc6")
    candidates = [{"candidate_id": "c1", "utterance": "where should it be"}, {"candidate_id": "c2", "utterance": "ok"}]
    dialog = make_dialog(
        corpus, "t1-0001", 0,
        [("user", "hi", {}), ("system", "hello what can i help you with today", {}),
         ("user", "book a table for six with french food", {}), ("system", "i'm on it", {})],
        meta={"candidates": candidates, "answer": {"candidate_id": "c1"}},
    )
    job = make_job(corpus)
    respond(item_for(job, dialog, 2), "ann", tag=TRICKY)
    files = export_job(job, tmp_path / "out")
    assert "paraphrase/dialogs.json" in files
    exported = read_json(tmp_path / "out" / "paraphrase" / "dialogs.json")
    assert exported == [
        {
            "dialog_id": "t1-0001",
            "utterances": ["hi", "hello what can i help you with today", f"{TRICKY} paraphrase", "i'm on it"],
            "candidates": candidates,
            "answer": {"candidate_id": "c1"},
        }
    ]


def test_jsonl_turns_keep_slot_values_and_meta(tmp_path):
    corpus = Corpus.objects.create(name="jsonl", source_format="jsonl")
    dialog = make_dialog(
        corpus, "x1", 0, [("user", "Cheap in the centre.", {}), ("system", "Sure.", {})], meta={"domain": "restaurant"}
    )
    other = make_dialog(corpus, "x2", 1, [("user", "North, please, centre.", {})])
    job = make_job(corpus)
    respond(item_for(job, dialog, 0), "ann", tag=TRICKY)
    respond(item_for(job, other, 0), "rej", status="rejected")
    export_job(job, tmp_path / "out")
    lines = (tmp_path / "out" / "simplified" / "dialogs.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines]
    assert len(rows) == 2
    assert rows[0] == {
        "dialog_id": "x1",
        "turns": [
            {"speaker": "user", "text": f"{TRICKY} simplified", "slot_values": [{"slot": "area", "value": "centre"}]},
            {"speaker": "system", "text": "Sure.", "slot_values": []},
        ],
        "meta": {"domain": "restaurant"},
    }
    assert rows[1]["turns"][0]["text"] == "North, please, centre."  # rejected rewrite left out
    assert rows[1]["meta"] == {}


# --- responses.csv ------------------------------------------------------------------------------------


def test_responses_csv_has_every_response_with_its_status(tmp_path):
    corpus = Corpus.objects.create(name="csv", source_format="jsonl")
    source = f"Source {TRICKY}"
    dialog = make_dialog(corpus, "d-1", 0, [("system", "Hello.", {}), ("user", source, {})])
    job = make_job(corpus)
    item = item_for(job, dialog, 1)
    accepted = respond(item, "alice", minutes=5, tag=TRICKY, active_seconds=61.25)
    failed = {"passed": False, "problems": [{"field": "verbose", "code": "not_longer", "message": "use more words"},
                                            {"field": "typos", "code": "too_different", "message": "..."}]}
    rejected = respond(item, "bob", status="rejected", minutes=6, checks=failed, active_seconds=None)

    export_job(job, tmp_path / "out")
    with open(tmp_path / "out" / "responses.csv", encoding="utf-8", newline="") as fh:
        header = next(csv.reader(fh))
    assert header == [
        "item_id", "dialog_id", "turn_index", "source_text", "worker", *VARIANTS,
        "status", "claimed_at", "submitted_at", "seconds_to_submit", "active_seconds", "failed_checks",
        "response_id", "flags", "flag_evidence",  # the evidence appended: the columns before it keep their places
    ]
    rows = read_csv(tmp_path / "out" / "responses.csv")
    assert [r["status"] for r in rows] == ["accepted", "rejected"]
    a, r = rows
    assert a["item_id"] == str(item.id) and a["dialog_id"] == "d-1" and a["turn_index"] == "1"
    assert a["source_text"] == source
    assert a["worker"] == "prolific:alice" and r["worker"] == "prolific:bob"
    assert a["verbose"] == f"{TRICKY} verbose"
    assert a["submitted_at"] == accepted.submitted_at.isoformat()
    assert a["claimed_at"] == accepted.claimed_at.isoformat()
    assert float(a["seconds_to_submit"]) == 90.0
    assert float(a["active_seconds"]) == 61.25 and r["active_seconds"] == ""
    assert a["failed_checks"] == ""
    assert r["failed_checks"] == "verbose:not_longer; typos:too_different"
    assert r["paraphrase"] == rejected.answers["paraphrase"]
    assert a["response_id"] == str(accepted.id) and a["flags"] == "" and a["flag_evidence"] == ""


def test_gold_items_are_left_out_of_test_sets_and_responses_csv(multiwoz, tmp_path):
    """Answers to gold items (known answers that check workers) are never exported as data."""
    corpus, job, d1, d2, d3 = multiwoz
    ordinary = item_for(job, d1, 0)
    respond(ordinary, "alice", minutes=1)
    # A gold item built on a source turn the job does not otherwise cover, and one without a turn.
    gold_turn = Turn.objects.get(dialog=d3, index=0)
    gold_on_turn = Item.objects.create(job=job, turn=gold_turn, position=100, payload={"utterance": gold_turn.text}, gold={"paraphrase": "x"})
    gold_bare = Item.objects.create(job=job, position=101, payload={"utterance": "A gold turn."}, gold={"paraphrase": "y"})
    respond(gold_on_turn, "alice", minutes=2, tag="GOLD")
    respond(gold_bare, "bob", minutes=3, tag="GOLD")

    out = tmp_path / "export"
    export_job(job, out)

    for variant in VARIANTS:
        data = read_json(out / variant / "data.json")
        assert list(data) == ["SNG0001.json", "PMUL0002.json"]  # MUL0003 only has a gold item
        assert "GOLD" not in json.dumps(data)
    rows = read_csv(out / "responses.csv")
    assert [(r["item_id"], r["worker"]) for r in rows] == [(str(ordinary.id), "prolific:alice")]
    manifest = read_json(out / "manifest.json")
    assert [d["dialog_id"] for d in manifest["dialogs"]] == ["SNG0001.json", "PMUL0002.json"]


# --- streaming and failure ----------------------------------------------------------------------------


def _export_queries(job, out):
    with CaptureQueriesContext(connection) as ctx:
        export_job(job, out)
    return len(ctx.captured_queries)


def test_query_count_does_not_grow_with_the_corpus(tmp_path):
    def build(name, n):
        corpus = Corpus.objects.create(name=name, source_format="multiwoz")
        dialogs = [
            make_dialog(corpus, f"D{i}.json", i, [("user", "Centre.", MULTIWOZ_RAW_USER), ("system", "Ok.", MULTIWOZ_RAW_SYSTEM)])
            for i in range(n)
        ]
        job = make_job(corpus)
        for i, dialog in enumerate(dialogs):
            respond(item_for(job, dialog, 0), f"{name}-w{i}")
        return job

    small, large = build("small", 2), build("large", 12)
    assert _export_queries(small, tmp_path / "small") == _export_queries(large, tmp_path / "large")


def test_export_refuses_a_non_empty_target_and_bad_variants(multiwoz, tmp_path):
    _, job, *_ = multiwoz
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "keep.txt").write_text("mine")
    with pytest.raises(ExportError, match="not an empty directory"):
        export_job(job, tmp_path / "taken")
    assert [p.name for p in (tmp_path / "taken").iterdir()] == ["keep.txt"]
    job.settings = {**job.settings, "variants": ["../etc"]}
    with pytest.raises(ExportError, match="invalid or repeated variant names"):
        export_job(job, tmp_path / "new")
    assert not (tmp_path / "new").exists()


def test_a_failure_midway_leaves_no_files(multiwoz, tmp_path, monkeypatch):
    _, job, d1, *_ = multiwoz
    respond(item_for(job, d1, 0), "ann")

    def fail(self, dialog):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(MultiwozWriter, "add", fail)
    with pytest.raises(OSError):
        export_job(job, tmp_path / "out")
    assert list(tmp_path.iterdir()) == []


def test_export_into_an_existing_empty_directory(multiwoz, tmp_path):
    _, job, *_ = multiwoz
    (tmp_path / "empty").mkdir()
    files = export_job(job, tmp_path / "empty")
    assert all((tmp_path / "empty" / name).is_file() for name in files)


# --- background runs ----------------------------------------------------------------------------------


def test_start_export_runs_after_commit_and_records_progress(multiwoz, settings, django_capture_on_commit_callbacks):
    _, job, d1, d2, _ = multiwoz
    respond(item_for(job, d1, 0), "ann")
    respond(item_for(job, d2, 0), "bob", status="rejected")
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        run = start_export(job)
        assert ExportRun.objects.get(pk=run.pk).status == RunStatus.PENDING
    assert len(callbacks) == 1
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    # 2 dialogs with items + 2 responses.
    assert (run.done, run.total) == (4, 4) and run.progress == 1.0
    assert run.started_at and run.finished_at and run.error == ""
    directory = Path(run.directory)
    assert directory == settings.QUORUM_EXPORT_DIR / f"job-{job.id}" / f"run-{run.id}"
    assert sorted(p.relative_to(directory).as_posix() for p in directory.rglob("*") if p.is_file()) == sorted(run.files)
    # Idempotent: running a finished run again changes nothing.
    assert run_export(run.pk).finished_at == run.finished_at


def test_progress_is_reported_while_exporting(multiwoz, tmp_path):
    _, job, d1, d2, _ = multiwoz
    respond(item_for(job, d1, 0), "ann")
    seen = []
    export_job(job, tmp_path / "out", progress=lambda done, total: seen.append((done, total)))
    assert seen[0] == (0, 3) and seen[-1] == (3, 3)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_run_fails_with_a_clear_message_when_the_export_dir_is_not_writable(multiwoz, settings, tmp_path):
    _, job, d1, *_ = multiwoz
    respond(item_for(job, d1, 0), "ann")
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where a directory should be")
    settings.QUORUM_EXPORT_DIR = blocker / "exports"
    run = ExportRun.objects.create(job=job)
    run_export(run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert "QUORUM_EXPORT_DIR" in run.error and str(blocker / "exports") in run.error
    assert run.files == [] and run.directory == "" and run.finished_at
    assert blocker.read_text() == "a file where a directory should be"


def test_run_failure_midway_leaves_nothing_in_the_export_dir(multiwoz, settings, monkeypatch):
    _, job, d1, *_ = multiwoz
    respond(item_for(job, d1, 0), "ann")
    monkeypatch.setattr(MultiwozWriter, "add", lambda self, dialog: (_ for _ in ()).throw(RuntimeError("boom")))
    run = ExportRun.objects.create(job=job)
    run_export(run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and "boom" in run.error
    job_dir = settings.QUORUM_EXPORT_DIR / f"job-{job.id}"
    assert list(job_dir.rglob("*")) == []


def test_start_export_refuses_bad_settings_before_queueing(multiwoz):
    corpus, *_ = multiwoz
    job = make_job(corpus)
    Job.objects.filter(pk=job.pk).update(settings={"variants": []})
    job.refresh_from_db()
    with pytest.raises(ExportError, match="no rewrite variants"):
        start_export(job)
    assert not ExportRun.objects.exists()


# --- management command -------------------------------------------------------------------------------


def test_command_writes_the_export_and_prints_counts(multiwoz, tmp_path):
    _, job, d1, *_ = multiwoz
    respond(item_for(job, d1, 0), "ann")
    out = io.StringIO()
    call_command("export_job", str(job.id), "--out", str(tmp_path / "cmd"), stdout=out)
    text = out.getvalue()
    assert "paraphrase/data.json" in text and "responses.csv" in text
    assert "typos: 1 turns replaced, 2 without an accepted rewrite" in text
    assert (tmp_path / "cmd" / "typos" / "data.json").is_file()


def test_command_rejects_unknown_jobs_and_bad_settings(multiwoz, tmp_path):
    corpus, *_ = multiwoz
    with pytest.raises(CommandError, match="No job with id 999999"):
        call_command("export_job", "999999", "--out", str(tmp_path / "a"))
    other = make_job(corpus)
    Job.objects.filter(pk=other.pk).update(settings={"variants": ["x y"]})
    with pytest.raises(CommandError, match="invalid or repeated variant names"):
        call_command("export_job", str(other.id), "--out", str(tmp_path / "b"))
    assert list(tmp_path.iterdir()) == []


def test_dialogs_spread_over_several_chunks_keep_corpus_order(tmp_path, monkeypatch):
    from annotation.selectors import exports as selectors

    monkeypatch.setattr(selectors, "DIALOG_CHUNK", 2)
    corpus = Corpus.objects.create(name="chunks", source_format="dstc6")
    positions = [4, 0, 6, 2, 5, 1, 3]  # created out of order
    dialogs = {p: make_dialog(corpus, f"dlg-{p}", p, [("user", f"u{p}", {}), ("system", f"s{p}", {})]) for p in positions}
    job = make_job(corpus)
    for p, dialog in dialogs.items():
        if p % 2 == 0:
            respond(item_for(job, dialog, 0), f"w{p}")
    export_job(job, tmp_path / "out")
    exported = read_json(tmp_path / "out" / "typos" / "dialogs.json")
    assert [d["dialog_id"] for d in exported] == [f"dlg-{p}" for p in range(7)]
    assert [d["utterances"][0] for d in exported] == [f"w{p} typos" if p % 2 == 0 else f"u{p}" for p in range(7)]


@pytest.mark.django_db(transaction=True)
def test_run_export_outside_a_test_transaction(multiwoz, settings):
    """Progress writes interleave with the streaming reads on a real autocommit connection."""
    _, job, d1, *_ = multiwoz
    respond(item_for(job, d1, 0), "ann")
    run = ExportRun.objects.create(job=job)
    run_export(run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert read_json(Path(run.directory) / "paraphrase" / "data.json")["SNG0001.json"]["log"][0]["text"] == "ann paraphrase"


FORMULAS = {"paraphrase": "=HYPERLINK(\"http://x.test\",\"centre\")", "typos": "+1+1 centre", "verbose": "-2+3 centre", "simplified": "@SUM(1) centre"}


def test_formula_like_rewrites_are_quoted_in_csv_and_raw_in_the_test_sets(tmp_path):
    """OWASP's CSV-injection rule: a cell starting with = + - @ (or tab, CR) gets a leading quote in
    responses.csv, so a spreadsheet shows it as text; the JSONL test set keeps the worker's text."""
    corpus = Corpus.objects.create(name="formulas", source_format="jsonl")
    dialog = make_dialog(corpus, "=d1", 0, [("user", "\tCheap in the centre.", {})])
    job = make_job(corpus)
    respond(item_for(job, dialog, 0), "ann", answers=FORMULAS)
    export_job(job, tmp_path / "out")

    [row] = read_csv(tmp_path / "out" / "responses.csv")
    assert {v: row[v] for v in VARIANTS} == {v: "'" + text for v, text in FORMULAS.items()}
    assert row["dialog_id"] == "'=d1" and row["source_text"] == "'\tCheap in the centre."
    assert row["turn_index"] == "0" and float(row["active_seconds"]) == 42.5  # numbers untouched
    for variant, text in FORMULAS.items():
        [line] = (tmp_path / "out" / variant / "dialogs.jsonl").read_text(encoding="utf-8").splitlines()
        assert json.loads(line)["turns"][0]["text"] == text
        assert json.loads(line)["dialog_id"] == "=d1"
