"""The contract every task type passes (DESIGN.md, "Task types"), and how the suites find each type's.

A type ships its own test module, `tests/annotation/task_types/test_<key>.py`, holding one subclass of
`TaskTypeContract` (or `QuestionnaireContract`) with its `key`, how to make a small live job of it and
the examples its capabilities' suites need (`payload`, `corpus_settings`, `comparison`,
`bad_setting_files`, `gold`). Nothing else lists the types: `contracts()` imports every such module
and finds the subclasses, and the core contract (below), the capability suites
(`test_capabilities.py`), the previews, the loop's query budget and the browser's page checks all run
over what it finds. A registered type without one fails
`test_task_type_contract.py::test_every_registered_task_type_has_a_contract_test`.

The core contract: its items are built, good answers are stored through the real work page and bad
ones refused with what to fix, responses combine, agreement has a table where it means something, a
reviewer sees the answers, a type's upload fields have a store, and the job exports.
"""
import contextlib
import csv
import importlib
import json
import pkgutil
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from annotation import task_types
from annotation.models import Response
from annotation.selectors.quality import combined_items, job_agreement
from annotation.services.claims import claim_next_slot
from annotation.services.exports import export_job
from annotation.services.jobs import launch_job
from annotation.services.payload_jobs import create_payload_job
from annotation.task_types import capabilities as caps
from annotation.task_types import default_settings
from annotation.task_types.questionnaire import QuestionnaireTaskType
from annotation.work_tokens import make_token
from tests.factories import make_corpus, make_live_job

HOSTILE = "<script>alert(1)</script>"
CONTEXT = [{"speaker": "user", "text": "Is there parking at the Lovell Lodge?"}]


def payload_job(key, payloads, **settings):
    """A live job of payload type `key`, two responses wanted per item."""
    return launch_job(create_payload_job(name=f"{key} job", task_type=key, payloads=payloads, redundancy=2, settings=settings or None))


def questions_gold(kind) -> tuple[dict, dict, dict]:
    """(gold, answers within a point of it, answers far from it) on a questionnaire's first question."""
    first = kind.answer_fields(default_settings(kind))[0]
    values = sorted(first["choices"])
    return {first["name"]: values[1]}, {first["name"]: values[2]}, {first["name"]: values[-1] + 5}


class TaskTypeContract:
    key = ""
    #: Field names that `bad_answers` must make the type refuse.
    bad_fields: set = set()

    # --- the examples a type's capabilities' suites read ------------------------------------

    #: `FromPayloads` (and `OrdersClaims`): a payload the type builds an item from.
    payload: dict | None = None
    #: `FromCorpusTurns`: settings under which the type makes items of a small corpus.
    corpus_settings: dict | None = None
    #: `ComparesSystems`: (payload, a deciding answer, an undecided answer).
    comparison: tuple | None = None
    #: `SettingFiles`: a file text each setting given as a file refuses, by setting.
    bad_setting_files: dict = {}

    #: Round trips of one work cycle (submit, then the next item's page) when the type does more than a
    #: rewrite's by design, with the reason beside it; None: the loop's budget (`test_loop_queries.py`).
    cycle_queries: int | None = None

    #: The work page opens where the worker writes first (a chat's message box), so a key pressed
    #: straight after load is text there, not a choice; say why beside it. False: it opens on a choice.
    opens_on_text: bool = False

    def gold(self, kind) -> tuple[dict, dict, dict] | None:
        """`GradesGold`: (gold, answers that meet it, answers that do not). A questionnaire's come from its questions."""
        return questions_gold(kind) if isinstance(kind, QuestionnaireTaskType) else None

    def environment(self):
        """What the type's pages need around them while a test runs (e.g. a chat relay): a context manager."""
        return contextlib.nullcontext()

    # --- what each type's test says -----------------------------------------------------------

    def make_job(self, make_annotator):
        """A live job of the type with at least two items, two responses wanted per item."""
        kind = task_types.get(self.key)
        if isinstance(kind, caps.FromPayloads):
            assert self.payload is not None, f"{type(self).__name__}: set `payload` or write make_job"
            return payload_job(self.key, [self.payload, self.payload])
        if isinstance(kind, caps.FromCorpusTurns):
            return make_live_job(make_corpus(dialogs=2, user_turns=1), task_type=self.key, redundancy=2, settings=self.corpus_settings)
        raise NotImplementedError(f"{type(self).__name__}: write make_job")

    def good_answers(self, item, n):
        raise NotImplementedError

    def bad_answers(self, item):
        raise NotImplementedError

    # --- the contract ------------------------------------------------------------------------

    @pytest.fixture(autouse=True)
    def _environment(self):
        with self.environment():
            yield

    @pytest.fixture
    def job(self, db, make_annotator):
        return self.make_job(make_annotator)

    def _workers(self, make_annotator, n=2):
        return [make_annotator(f"{self.key}-w{i}") for i in range(n)]

    def _submit_by_page(self, job, user, worker, n):
        client = Client()
        client.force_login(user)
        slot = claim_next_slot(job=job, worker=worker)
        assert slot is not None, "the job offered no item"
        page = client.get(reverse("work", args=[make_token(slot)]))
        assert page.status_code == 200
        html = page.content.decode()
        assert HOSTILE not in html  # whatever the payload holds is escaped
        posted = client.post(reverse("work", args=[make_token(slot)]), self.good_answers(slot.item, n))
        assert posted.status_code == 302, posted.content.decode()[:2000]
        return Response.objects.get(slot=slot)

    def test_it_is_registered_and_its_settings_have_help(self):
        kind = task_types.get(self.key)
        assert kind.label and kind.template and task_types.builds_from(kind) in ("corpus", "payloads", "responses")
        assert all(isinstance(help_text, str) and help_text for _default, help_text in kind.settings_help.values())
        assert kind.clean_settings({}) == kind.clean_settings(kind.clean_settings({}))  # cleaning is stable

    def test_good_answers_are_stored_through_the_work_page(self, job, make_annotator):
        (user, worker), = self._workers(make_annotator, 1)
        response = self._submit_by_page(job, user, worker, 0)
        assert response.status in (Response.Status.ACCEPTED, Response.Status.AWAITING_REVIEW)
        assert response.transitions.first().actor == "worker"

    def test_bad_answers_are_refused_with_what_to_fix_and_nothing_is_stored(self, job, make_annotator):
        (user, worker), = self._workers(make_annotator, 1)
        client = Client()
        client.force_login(user)
        slot = claim_next_slot(job=job, worker=worker)
        refused = client.post(reverse("work", args=[make_token(slot)]), self.bad_answers(slot.item))
        assert refused.status_code == 400
        kind = task_types.get(job.task_type)
        _cleaned, problems = kind.validate(slot.item.payload, job.settings, self.bad_answers(slot.item))
        assert self.bad_fields <= {p.field for p in problems} and all(p.message for p in problems)
        # A worker finds what to fix by the words on the page: a refusal of a field they see starts with its label.
        labels = {f["name"]: f["label"] for f in kind.answer_fields(job.settings) if not f.get("hidden")}
        assert [p.message for p in problems if p.field in labels and not p.message.startswith(labels[p.field])] == []
        assert not Response.objects.filter(slot=slot).exists()

    def test_responses_combine_per_item_and_agreement_has_a_table(self, job, make_annotator):
        workers = self._workers(make_annotator, 2)
        for n, (user, worker) in enumerate(workers):
            self._submit_by_page(job, user, worker, n)
        kind = task_types.get(job.task_type)
        combined = combined_items(job)
        counted = Response.objects.counted().filter(item__job=job).count()
        assert sum(row.combined["responses"] for row in combined) == counted
        agreement = job_agreement(job)
        has_choices = any(f.get("choices") and not f.get("hidden") for f in kind.answer_fields(job.settings))
        assert bool(agreement) == (has_choices and counted > 0)
        assert all(a.level == task_types.agreement_level_of(kind, a.question, job.settings) for a in agreement)

    def test_a_reviewer_sees_every_answer_under_its_label(self, job, make_annotator):
        (user, worker), = self._workers(make_annotator, 1)
        response = self._submit_by_page(job, user, worker, 0)
        kind = task_types.get(job.task_type)
        view = kind.review_view(response.item.payload, response.answers, job.settings)
        assert set(view) >= {"subject", "slot_values", "shown"}
        labels = {f["label"] for f in kind.answer_fields(job.settings)}
        assert view["shown"] and all(row["label"] in labels and isinstance(row["text"], str) for row in view["shown"])

    def test_upload_fields_are_files_with_a_store(self, job, make_annotator, settings):
        """The upload part of the contract: a type whose fields take files names where they are
        stored; a refused submission stores no file; a stored one keeps JSON in its answers."""
        kind = task_types.get(job.task_type)
        takes = task_types.capability(kind, task_types.TakesUploads)
        uploads = takes.upload_fields(job.settings) if takes else []
        assert bool(uploads) == bool(takes and takes.upload_store)
        (user, worker), = self._workers(make_annotator, 1)
        client = Client()
        client.force_login(user)
        slot = claim_next_slot(job=job, worker=worker)
        page = client.get(reverse("work", args=[make_token(slot)])).content.decode()
        assert ('enctype="multipart/form-data"' in page) == bool(uploads)
        assert client.post(reverse("work", args=[make_token(slot)]), self.bad_answers(slot.item)).status_code == 400
        stored = lambda: [p for p in settings.MEDIA_ROOT.rglob("*") if p.is_file()]  # noqa: E731
        assert stored() == []
        assert client.post(reverse("work", args=[make_token(slot)]), self.good_answers(slot.item, 0)).status_code == 302
        response = Response.objects.get(slot=slot)
        json.dumps(response.answers)  # what is stored is JSON, whatever was posted
        assert all(isinstance(response.answers[f["name"]], dict) for f in uploads)
        assert len(stored()) == len(uploads)

    def test_the_job_exports_its_responses(self, job, make_annotator, tmp_path):
        (user, worker), = self._workers(make_annotator, 1)
        self._submit_by_page(job, user, worker, 0)
        files = export_job(job, tmp_path / "out")
        assert "responses.csv" in files and "README.md" in files
        with open(tmp_path / "out" / "responses.csv", encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        assert len(rows) == Response.objects.filter(item__job=job).count() == 1


class QuestionnaireContract(TaskTypeContract):
    """A questionnaire preset's contract: its answers are read off its own questions."""

    bad_fields = set()

    def good_answers(self, item, n):
        fields = task_types.get(self.key).answer_fields(item.job.settings)
        return {f["name"]: str(list(f["choices"])[(n + i) % len(f["choices"])]) for i, f in enumerate(fields) if "choices" in f}

    def bad_answers(self, item):
        first = task_types.get(self.key).answer_fields(item.job.settings)[0]
        self.bad_fields = {first["name"]}
        return {first["name"]: "99"}


def _subclasses(cls) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


def contracts() -> dict[str, type[TaskTypeContract]]:
    """Every type's contract class by key: the `TaskTypeContract` subclasses with a key in this
    package's test modules, each imported (once) to find them."""
    for module in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if module.name.startswith("test_"):
            importlib.import_module(f"{__package__}.{module.name}")
    found: dict[str, type[TaskTypeContract]] = {}
    for cls in _subclasses(TaskTypeContract):
        if cls.key:
            assert cls.key not in found, f"two contract classes for {cls.key!r}: {found[cls.key].__name__} and {cls.__name__}"
            found[cls.key] = cls
    return found


def contract_for(key: str) -> TaskTypeContract:
    """An instance of type `key`'s contract class (its examples and its job factory)."""
    try:
        return contracts()[key]()
    except KeyError:
        raise AssertionError(
            f"task type {key!r} has no contract: add tests/annotation/task_types/test_{key}.py with a "
            "TaskTypeContract subclass whose key is it"
        ) from None


def contract_params(*, only=None) -> list:
    """pytest parameters, one per registered type (those that declare `only`, if given), each carrying
    its contract class's marks (e.g. `speech`), ids by key."""
    kinds = task_types.types_with(only) if only else [task_types.get(key) for key in sorted(task_types.registry())]
    params = []
    for kind in kinds:
        cls = contracts().get(kind.key)
        marks = getattr(cls, "pytestmark", []) if cls else []
        params.append(pytest.param(kind.key, id=kind.key, marks=marks))
    return params
