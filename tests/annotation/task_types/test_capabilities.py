"""One contract suite per task-type capability (`annotation/task_types/capabilities.py`), each run
over every registered type that declares it; the core contract is `contract.py`.

The examples a suite needs of a type (a payload, a comparison, a bad setting file, gold) are
attributes of the type's own contract class, in its `test_<key>.py` (`contract.contracts()` finds
it), never a list here. A capability without a suite, or a type that declares a capability whose
example its contract does not give, fails `test_every_declared_capability_has_a_suite_and_examples`.
"""
import re
from types import SimpleNamespace

import pytest
from django.db import connection

from annotation import task_types
from annotation.extensions import upload_stores
from annotation.models import Item, Job
from annotation.services.claims import _claims_in_one_statement
from annotation.services.jobs import JobError, create_job
from annotation.services.payload_jobs import create_payload_job
from annotation.services.voting import enable_voting
from annotation.task_types import capabilities as caps
from tests.factories import make_corpus, make_live_job

from .contract import contract_for, payload_job
from .test_chat import CHAT


def declaring(cls) -> list:
    """pytest parameters: every registered type that declares `cls`, by key."""
    return [pytest.param(kind, id=kind.key) for kind in task_types.types_with(cls)]


def example(kind):
    """The type's contract (its own `test_<key>.py`), which holds the examples these suites read."""
    return contract_for(kind.key)


SUITES: dict[type, type] = {}


def suite(cls):
    """Mark a test class as the contract suite of capability `cls`."""
    def mark(test_class):
        SUITES[cls] = test_class
        return test_class
    return mark


# --- Where items come from ---------------------------------------------------------------------


@suite(caps.FromCorpusTurns)
class TestFromCorpusTurns:
    @pytest.mark.django_db
    @pytest.mark.parametrize("kind", declaring(caps.FromCorpusTurns))
    def test_a_job_over_a_corpus_has_items_of_its_source_speaker(self, kind):
        job = create_job(corpus=make_corpus(dialogs=2, user_turns=2), name="c", task_type=kind.key, settings=example(kind).corpus_settings)
        items = list(job.items.select_related("turn"))
        assert items and all(item.turn_id for item in items)
        if kind.source_speaker is not None:
            assert {item.turn.speaker for item in items} == {kind.source_speaker}
        assert kind.settings_for_corpus(job.settings, {}) == job.settings  # a corpus with nothing to add

    @pytest.mark.django_db
    @pytest.mark.parametrize("kind", declaring(caps.FromCorpusTurns))
    def test_it_is_refused_a_payload_job(self, kind):
        with pytest.raises(JobError):
            create_payload_job(name="p", task_type=kind.key, payloads=[{}])


@suite(caps.FromPayloads)
class TestFromPayloads:
    @pytest.mark.django_db
    @pytest.mark.parametrize("kind", declaring(caps.FromPayloads))
    def test_a_payload_job_builds_its_items_and_a_corpus_job_is_refused(self, kind):
        job = create_payload_job(name="p", task_type=kind.key, payloads=[example(kind).payload])
        assert job.items.count() == 1 and job.payload_set_id is not None
        with pytest.raises(JobError, match="payloads"):
            create_job(corpus=make_corpus(), name="c", task_type=kind.key)

    @pytest.mark.parametrize("kind", declaring(caps.FromPayloads))
    def test_a_payload_file_is_read_or_refused_with_its_name(self, kind):
        with pytest.raises(task_types.PayloadError, match="pairs.jsonl"):
            kind.read_payloads("{not json", "pairs.jsonl")
        assert isinstance(kind.payloads_from_corpus({}), list)
        assert isinstance(kind.payload_file, str)


@suite(caps.FromResponses)
class TestFromResponses:
    def test_exactly_one_type_builds_from_responses(self):
        assert len(task_types.types_with(caps.FromResponses)) == 1

    @pytest.mark.django_db
    @pytest.mark.parametrize("kind", declaring(caps.FromResponses))
    def test_its_jobs_are_made_by_turning_voting_on(self, kind):
        with pytest.raises(JobError, match="enable voting"):
            create_job(corpus=make_corpus(), name="c", task_type=kind.key)
        vote_job = enable_voting(make_live_job(make_corpus(name="voted", dialogs=1, user_turns=1)))
        assert vote_job.task_type == kind.key


def test_every_type_declares_exactly_one_item_source():
    for kind in task_types.registry().values():
        assert sum(isinstance(kind, cls) for cls in caps.ITEM_SOURCES) == 1, kind.key
        assert task_types.builds_from(kind) in ("corpus", "payloads", "responses")


def test_register_refuses_a_type_without_an_item_source_or_a_store_for_its_files():
    class NoSource(task_types.TaskType):
        key = "no-source"

        def answer_fields(self, settings):
            return []

    class FilesWithoutStore(task_types.TaskType, caps.FromPayloads):
        key = "files"

        def answer_fields(self, settings):
            return [{"name": "f", "label": "F", "help": "", "upload": "audio/wav"}]

    with pytest.raises(ValueError, match="item source"):
        task_types.register(NoSource())
    with pytest.raises(ValueError, match="TakesUploads"):
        task_types.register(FilesWithoutStore())


# --- Settings given as files ---------------------------------------------------------------------


@suite(caps.SettingFiles)
class TestSettingFiles:
    @pytest.mark.parametrize("kind", declaring(caps.SettingFiles))
    def test_each_file_setting_is_a_setting_read_or_refused_by_name(self, kind):
        assert kind.setting_files and set(kind.setting_files) <= set(kind.settings_help)
        for setting, what in kind.setting_files.items():
            assert what
            with pytest.raises(task_types.TaskTypeSettingsError) as refused:
                kind.read_setting_file(setting, example(kind).bad_setting_files[setting], "given.txt")
            assert setting in refused.value.errors
        with pytest.raises(task_types.TaskTypeSettingsError):
            kind.read_setting_file("no_such_setting", "", "x")


# --- What a response sets off ------------------------------------------------------------------------


@suite(caps.Votable)
class TestVotable:
    @pytest.mark.parametrize("kind", declaring(caps.Votable))
    def test_vote_parts_are_answer_fields_and_the_vote_type_takes_them(self, kind):
        settings = kind.clean_settings({})
        parts = kind.vote_parts(settings)
        names = {f["name"] for f in kind.answer_fields(settings)}
        assert all(set(part) == {"name", "label"} and part["name"] in names for part in parts)
        vote_kind, = task_types.types_with(caps.FromResponses)
        question = {"question": kind.vote_question} if kind.vote_question else {}
        cleaned = vote_kind.clean_settings({"parts": parts, **question})
        assert len(vote_kind.answer_fields(cleaned)) == max(1, len(parts)) + 1  # a verdict per part, and a reason

    def test_a_type_that_is_not_votable_cannot_be_voted_on(self, db):
        from annotation.services.voting import VotingError

        job = make_live_job(make_corpus(), task_type="hard_score")
        with pytest.raises(VotingError):
            enable_voting(job)


@suite(caps.GradesGold)
class TestGradesGold:
    @pytest.mark.parametrize("kind", declaring(caps.GradesGold))
    def test_its_rule_meets_the_gold_answer_and_refuses_a_wrong_one(self, kind):
        gold, near, wrong = example(kind).gold(kind)
        assert task_types.grade_gold(kind, gold, gold) and task_types.grade_gold(kind, gold, near)
        assert not task_types.grade_gold(kind, gold, wrong) and not task_types.grade_gold(kind, gold, {})

    def test_without_it_every_key_must_be_equal(self):
        rewrite = task_types.get("rewrite")
        assert task_types.grade_gold(rewrite, {"a": 1}, {"a": 1, "b": 2}) and not task_types.grade_gold(rewrite, {"a": 1}, {"a": 2})


@suite(caps.FeedsRatings)
class TestFeedsRatings:
    @pytest.mark.parametrize("kind", declaring(caps.FeedsRatings))
    def test_its_answers_are_ratings_on_numbered_scales(self, kind):
        settings = kind.clean_settings({})
        rated = [f for f in kind.answer_fields(settings) if f.get("choices")]
        assert rated and all(all(isinstance(v, int) for v in f["choices"]) for f in rated)
        assert kind.agreement_level in ("ordinal", "interval", "ratio")
        assert isinstance(kind, caps.FromPayloads)  # a campaign's payloads


@suite(caps.ComparesSystems)
class TestComparesSystems:
    @pytest.mark.parametrize("kind", declaring(caps.ComparesSystems))
    def test_a_decided_response_is_a_comparison_of_two_systems(self, kind):
        payload, decided, undecided = example(kind).comparison
        built = kind.build_payload(SimpleNamespace(payload=payload))
        a, b, outcome, _instance = kind.comparison(built, decided)
        assert a != b and outcome in ("a", "b", "tie")
        assert kind.comparison(built, undecided) is None

    @pytest.mark.parametrize("kind", declaring(caps.ComparesSystems))
    def test_it_says_what_the_worker_saw_and_which_side_was_left(self, kind):
        payload, decided, _undecided = example(kind).comparison
        built = kind.build_payload(SimpleNamespace(payload=payload))
        left, text_a, text_b = kind.presentation(built, {**decided, "left": "b"})
        assert left == "b" and text_a and text_b and text_a != text_b
        assert kind.presentation(built, {k: v for k, v in decided.items() if k != "left"})[0] is None


# --- The page ------------------------------------------------------------------------------------------


@suite(caps.TakesUploads)
class TestTakesUploads:
    @pytest.mark.parametrize("kind", declaring(caps.TakesUploads))
    def test_its_files_have_a_media_type_and_a_store(self, kind):
        fields = kind.upload_fields(kind.clean_settings({}))
        assert fields and all(re.fullmatch(r"[a-z]+/[a-z0-9.+-]+", f["upload"]) for f in fields)
        assert kind.upload_store in upload_stores
        assert kind.texts_of({f["name"]: {"seconds": 1.0} for f in fields}, kind.clean_settings({})) == {}


@suite(caps.RelaysChat)
class TestRelaysChat:
    @pytest.mark.parametrize("kind", declaring(caps.RelaysChat))
    def test_without_a_relay_the_server_fills_in_an_empty_transcript(self, kind):
        item = SimpleNamespace(payload={**CHAT, "relay": "no-such-relay"}, pk=1)
        slot = SimpleNamespace(pk=1, worker_id=1, job_id=1)
        answers = kind.server_answers(item, slot, kind.clean_settings({}))
        assert answers == {"transcript": []}
        _cleaned, problems = kind.validate(kind.build_payload(SimpleNamespace(payload=CHAT)), kind.clean_settings({}), answers)
        assert problems  # no verdict before any message

    @pytest.mark.parametrize("kind", declaring(caps.RelaysChat))
    def test_its_combined_column_words_name_columns_of_its_combination(self, kind):
        settings = kind.clean_settings({})
        words = kind.combined_column_help(settings)
        assert set(words) <= set(kind.combine([{"transcript": []}], settings))
        assert all(isinstance(w, str) and w.strip() for w in words.values())


@suite(caps.GroupsFields)
class TestGroupsFields:
    @pytest.mark.parametrize("kind", declaring(caps.GroupsFields))
    def test_rows_keep_their_order_and_carry_what_the_page_needs(self, kind):
        settings = kind.clean_settings({})
        rows = [{**f, "value": "", "problems": []} for f in kind.answer_fields(settings)]
        completed = kind.form_rows(rows, {}, {})
        assert [r["name"] for r in completed] == [r["name"] for r in rows]
        assert all(set(r) >= {"name", "label", "value", "problems"} for r in completed)


# --- Who gets which item -----------------------------------------------------------------------------


@suite(caps.OrdersClaims)
class TestOrdersClaims:
    @pytest.mark.django_db
    @pytest.mark.parametrize("kind", declaring(caps.OrdersClaims))
    def test_each_worker_starts_within_the_jobs_positions_and_claims_in_one_statement_only_with_the_start_in_sql(self, kind, make_annotator):
        job = payload_job(kind.key, [example(kind).payload] * 3)
        worker = make_annotator("w")[1]
        start = kind.claim_start(job, worker)
        assert start is None or 0 <= start < job.items.count()
        assert start == kind.claim_start(job, worker)  # the same order on every claim
        assert not _claims_in_one_statement(kind, job)  # without its start in SQL: in a transaction
        # With it (on PostgreSQL), the one statement; that it says what claim_start says is
        # tests/annotation/test_ordered_claims_in_one_statement.py.
        values = kind.claim_start_values(job, worker)
        expression = None if values is None else kind.claim_start_expression(job.pk, worker.pk, **values)
        assert (values is None) == (expression is None)  # values exactly when there is an expression to bind them to
        assert _claims_in_one_statement(kind, job, values) == (values is not None and connection.vendor == "postgresql")


@suite(caps.HoldsBackItems)
class TestHoldsBackItems:
    @pytest.mark.django_db
    @pytest.mark.parametrize("kind", declaring(caps.HoldsBackItems))
    def test_what_it_holds_back_is_a_lookup_on_items(self, kind):
        held = kind.held_back(Job(pk=1, task_type=kind.key))
        assert held is None or Item.objects.exclude(**held).count() == 0


# --- Combining and review ------------------------------------------------------------------------------


@suite(caps.HasSubset)
class TestHasSubset:
    @pytest.mark.parametrize("kind", declaring(caps.HasSubset))
    def test_membership_is_a_bool_and_none_without_a_subset(self, kind):
        settings = kind.clean_settings({})
        member = kind.in_subset({"mean": None}, settings)
        assert member is None or member is False
        rows = [{f["name"]: max(f["choices"]) for f in kind.answer_fields(settings) if f.get("choices")}]
        assert kind.in_subset(kind.combine(rows, settings), settings) in (None, True)


@suite(caps.DiffsAgainstSubject)
class TestDiffsAgainstSubject:
    @pytest.mark.parametrize("kind", declaring(caps.DiffsAgainstSubject))
    def test_its_answers_are_free_text_about_the_subject(self, kind):
        settings = kind.clean_settings({})
        fields = kind.answer_fields(settings)
        assert fields and not any(f.get("choices") or f.get("upload") for f in fields)
        assert kind.subject_of({"utterance": "a table for two"}) == "a table for two"


@suite(caps.LevelsByQuestion)
class TestLevelsByQuestion:
    @pytest.mark.parametrize("kind", declaring(caps.LevelsByQuestion))
    def test_every_question_of_a_good_answer_has_a_level(self, kind):
        from annotation.task_types.base import LEVELS

        settings = kind.clean_settings({})
        answers = {f["name"]: next(iter(f["choices"])) for f in kind.answer_fields(settings) if f.get("choices")}
        questions = kind.agreement_values(answers, settings)
        assert questions, "a type with levels by question measures agreement on some question"
        levels = {q: task_types.agreement_level_of(kind, q, settings) for q in questions}
        assert set(levels.values()) <= set(LEVELS), levels


# --- What the builder is told ----------------------------------------------------------------------


@suite(caps.NotesSettings)
class TestNotesSettings:
    @pytest.mark.parametrize("kind", declaring(caps.NotesSettings))
    def test_notes_are_sentences_in_words(self, kind):
        notes = kind.settings_notes(kind.clean_settings({}))
        assert isinstance(notes, list) and all(isinstance(n, str) and n.strip().endswith(".") and "_" not in n for n in notes)


# --- Export ------------------------------------------------------------------------------------------


@suite(caps.ExportsTestSets)
class TestExportsTestSets:
    @pytest.mark.parametrize("kind", declaring(caps.ExportsTestSets))
    def test_test_sets_are_directory_names_and_a_turn_without_responses_is_kept(self, kind):
        from annotation.exporters import TurnRecord

        settings = kind.clean_settings({})
        names = kind.test_set_names(settings)
        assert names and all(re.fullmatch(r"[a-z][a-z0-9_-]*", n) for n in names) and len(set(names)) == len(names)
        assert all(isinstance(c, str) for c in kind.response_columns(settings))
        turn = TurnRecord(0, "user", "a table for two", [], {})
        assert kind.test_set_turns(turn, {"utterance": "a table for two"}, [], settings) == {}
        assert isinstance(kind.manifest_extra(settings), dict) and kind.manifest_of({}) == {}

    @pytest.mark.django_db
    @pytest.mark.parametrize("kind", declaring(caps.ExportsTestSets))
    def test_a_job_without_a_corpus_cannot_export_test_sets(self, kind):
        from annotation.exporters import ExportError
        from annotation.services.exports import check_exportable

        with pytest.raises(ExportError, match="no corpus"):
            check_exportable(Job(pk=1, task_type=kind.key, corpus=None))


class _EmptySource:
    include_audio = False

    def counted_items(self):
        return []

    def readings(self):
        return []

    def copy_file(self, stored, name):
        raise AssertionError("nothing to copy")


@suite(caps.ExportsFiles)
class TestExportsFiles:
    @pytest.mark.parametrize("kind", declaring(caps.ExportsFiles))
    def test_its_files_are_jsonl_records(self, kind):
        files = kind.answer_files(_EmptySource(), kind.clean_settings({}))
        assert files and all(name.endswith(".jsonl") and isinstance(records, list) for name, records in files.items())


# --- Coverage ------------------------------------------------------------------------------------------


def test_every_declared_capability_has_a_suite_and_examples():
    assert set(SUITES) == set(caps.CAPABILITIES), "a capability without a contract suite"
    examples = {
        caps.FromPayloads: ("payload", lambda contract, kind: contract.payload),
        caps.OrdersClaims: ("payload", lambda contract, kind: contract.payload),
        caps.ComparesSystems: ("comparison", lambda contract, kind: contract.comparison),
        caps.GradesGold: ("gold(kind)", lambda contract, kind: contract.gold(kind)),
    }
    for kind in task_types.registry().values():
        contract = example(kind)
        where = f"{type(contract).__name__} (tests/annotation/task_types/)"
        for cls in caps.declared(kind):
            assert cls in SUITES, f"{kind.key}: {cls.__name__} has no suite"
            if cls in examples:
                name, read = examples[cls]
                assert read(contract, kind) is not None, f"{kind.key}: {SUITES[cls].__name__} needs an example: give {where} `{name}`"
        if isinstance(kind, caps.SettingFiles):
            missing = set(kind.setting_files) - set(contract.bad_setting_files)
            assert not missing, f"{kind.key}: give {where} `bad_setting_files` for {', '.join(sorted(missing))}"


def test_no_module_compares_a_task_type_key_outside_its_type():
    """Code asks what a type can do (its capabilities), never which type it is: no comparison of a
    key, and no query filtered by one, outside `annotation/task_types/` (migrations aside)."""
    import pathlib

    root = pathlib.Path(task_types.__file__).parents[2]
    keys = "|".join(re.escape(k) for k in task_types.registry())
    compared = re.compile(rf"""(task_type|\.key)\s*(==|!=)\s*["']|["']({keys})["']\s*(==|!=|in)\s|(filter|exclude)\(.*task_type=["']""")
    found = []
    for app in ("annotation", "evaluation", "hits", "quorum"):
        for path in (root / app).rglob("*.py"):
            if "migrations" in path.parts or path.is_relative_to(root / "annotation" / "task_types"):
                continue
            found += [f"{path.relative_to(root)}:{n}" for n, line in enumerate(path.read_text().splitlines(), 1) if compared.search(line)]
    assert found == []
