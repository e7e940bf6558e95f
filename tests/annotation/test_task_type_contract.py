"""The contract every task type passes (DESIGN.md, "Task types"): its items are built, good answers
are stored through the real work page and bad ones refused with what to fix, responses combine,
agreement has a table where it means something, a reviewer sees the answers, and the job exports.

Each registered task type has a subclass here; a type without one fails
`test_every_registered_task_type_has_a_contract_test`. What only some types do (their capabilities)
has a suite each in `task_types/test_capabilities.py`.
"""
import csv
import json

import pytest
from django.test import Client
from django.urls import reverse

from annotation import task_types
from annotation.models import Response, Worker
from annotation.selectors.quality import combined_items, job_agreement
from annotation.services.claims import claim_next_slot
from annotation.services.exports import export_job
from annotation.services.jobs import launch_job
from annotation.services.payload_jobs import create_payload_job
from annotation.services.voting import enable_voting
from annotation.work_tokens import make_token
from tests.factories import good_answers, make_corpus, make_live_job

from ..quality.helpers import write

HOSTILE = "<script>alert(1)</script>"
CONTEXT = [{"speaker": "user", "text": "Is there parking at the Lovell Lodge?"}]


class TaskTypeContract:
    key = ""
    #: Field names that `bad_answers` must make the type refuse.
    bad_fields: set = set()

    def make_job(self, make_annotator):
        raise NotImplementedError

    def good_answers(self, item, n):
        raise NotImplementedError

    def bad_answers(self, item):
        raise NotImplementedError

    # --- the contract ------------------------------------------------------------------------

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
        assert all(a.level == kind.agreement_level for a in agreement)

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


def _payload_job(key, payloads, **settings):
    return launch_job(create_payload_job(name=f"{key} job", task_type=key, payloads=payloads, redundancy=2, settings=settings or None))


class TestRewrite(TaskTypeContract):
    key = "rewrite"
    bad_fields = {"paraphrase"}

    def make_job(self, make_annotator):
        return make_live_job(make_corpus(dialogs=2, user_turns=1), redundancy=2)

    def good_answers(self, item, n):
        return good_answers(item)

    def bad_answers(self, item):
        return {**good_answers(item), "paraphrase": item.payload["utterance"]}  # not a paraphrase


class TestVote(TaskTypeContract):
    key = "vote"
    bad_fields = {"vote"}

    def make_job(self, make_annotator):
        job = make_live_job(make_corpus(dialogs=2, user_turns=1))
        vote_job = enable_voting(job, votes_per_response=2, against_threshold=2)
        write(job, make_annotator("author")[1])
        return vote_job

    def good_answers(self, item, n):
        fields = task_types.get("vote").answer_fields(item.job.settings)
        votes = {f["name"]: ["for", "against"][(n + i) % 2] for i, f in enumerate(fields) if f.get("choices")}
        return {**votes, "reason": f"fine {HOSTILE}"}

    def bad_answers(self, item):
        first = task_types.get("vote").answer_fields(item.job.settings)[0]["name"]
        self.bad_fields = {first}
        return {first: "maybe"}


class QuestionnaireContract(TaskTypeContract):
    bad_fields = set()

    def good_answers(self, item, n):
        fields = task_types.get(self.key).answer_fields(item.job.settings)
        return {f["name"]: str(list(f["choices"])[(n + i) % len(f["choices"])]) for i, f in enumerate(fields) if "choices" in f}

    def bad_answers(self, item):
        first = task_types.get(self.key).answer_fields(item.job.settings)[0]
        self.bad_fields = {first["name"]}
        return {first["name"]: "99"}


class TestHardScore(QuestionnaireContract):
    key = "hard_score"

    def make_job(self, make_annotator):
        return make_live_job(make_corpus(dialogs=2, user_turns=1), task_type="hard_score", redundancy=2)


LIKERT_PAYLOAD = {"context": CONTEXT, "response": f"Yes, free parking. {HOSTILE}", "knowledge": [{"entity": "Lovell Lodge", "title": "Parking", "body": "Free parking."}]}


class TestLikert(QuestionnaireContract):
    key = "likert"

    def make_job(self, make_annotator):
        return _payload_job(self.key, [LIKERT_PAYLOAD, {**LIKERT_PAYLOAD, "response": "No."}])


class TestFedTurn(QuestionnaireContract):
    key = "fed_turn"

    def make_job(self, make_annotator):
        return _payload_job(self.key, [{"context": CONTEXT, "response": f"Parking is free. {HOSTILE}"}])


class TestFedDialog(QuestionnaireContract):
    key = "fed_dialog"

    def make_job(self, make_annotator):
        dialog = [*CONTEXT, {"speaker": "system", "text": f"Parking is free. {HOSTILE}"}]
        return _payload_job(self.key, [{"dialog": dialog}, {"dialog": dialog[:2]}])


PAIR = {"context": CONTEXT, "instance": "dialog-1", "a": {"system": "team-a", "text": f"Yes, it has free parking. {HOSTILE}"}, "b": {"system": "team-b", "text": "I don't know."}}


class TestPairwise(TaskTypeContract):
    key = "pairwise"
    bad_fields = {"winner"}

    def make_job(self, make_annotator):
        return _payload_job(self.key, [PAIR, {**PAIR, "instance": "dialog-2"}])

    def good_answers(self, item, n):
        return {"winner": ["a", "tie"][n % 2], "left": "a", "reason": "more helpful"}

    def bad_answers(self, item):
        return {"winner": "c", "left": "a"}


class TestOutOfScope(TaskTypeContract):
    key = "oos_insert"
    bad_fields = {"utterance"}

    def make_job(self, make_annotator):
        qa = [{"question": f"Is there parking? {HOSTILE}", "answer": "Yes, free parking."}]
        settings = {"insert_probability": 1.0, "qa_pairs": qa}
        return make_live_job(make_corpus(dialogs=2, user_turns=2), task_type="oos_insert", redundancy=2, settings=settings)

    def good_answers(self, item, n):
        return {"utterance": ["What is the capital of Peru?", f"My cat sings at night. {HOSTILE}"][n % 2]}

    def bad_answers(self, item):
        return {"utterance": item.payload["next_turn"]}  # an in-scope turn of the dialog


QA = {"id": "faq-1", "question": f"Is there free parking at the hotel? {HOSTILE}", "answer": "Yes, parking is free."}
PARAPHRASES = [
    "Can I park for free at the hotel?", "Does the hotel offer parking without charge?", "Is parking at the hotel free of charge?",
    "Do guests pay for parking at this hotel?", "Will parking my car there cost anything?", "Is there a parking fee at the hotel?",
    "Can guests leave their car at the hotel for nothing?", "Does it cost money to park at the hotel?", "Is the hotel car park free?",
]


class TestQaParaphrase(TaskTypeContract):
    key = "qa_paraphrase"
    bad_fields = {"paraphrase_1", "paraphrase_3"}

    def make_job(self, make_annotator):
        return _payload_job(self.key, [QA, {**QA, "id": "faq-2"}], count=3)

    def good_answers(self, item, n):
        return {f"paraphrase_{i + 1}": PARAPHRASES[(3 * n + i) % 9] for i in range(3)}

    def bad_answers(self, item):
        return {"paraphrase_1": item.payload["question"], "paraphrase_2": PARAPHRASES[0], "paraphrase_3": PARAPHRASES[0] + "!"}


@pytest.mark.speech  # recordings synthesised with espeak-ng
class TestSpokenReading(TaskTypeContract):
    """Readings are upload fields: the good answers are recordings synthesised in the test run, the
    bad ones a silent recording and a missing one."""

    key = "spoken_reading"
    bad_fields = {"reading_1", "reading_2"}

    def make_job(self, make_annotator):
        return make_live_job(make_corpus(dialogs=2, user_turns=1), task_type="spoken_reading", redundancy=2, settings={"readings": 2})

    def good_answers(self, item, n):
        from .spoken_audio import readings_of

        return readings_of(item.payload["utterance"], 2)

    def bad_answers(self, item):
        from .spoken_audio import silence, upload

        return {"reading_1": upload("reading_1", silence())}  # reading_2 not recorded


def test_every_registered_task_type_has_a_contract_test():
    covered = {cls.key for cls in globals().values() if isinstance(cls, type) and issubclass(cls, TaskTypeContract) and cls.key}
    assert set(task_types.registry()) == covered


def test_the_core_stays_small():
    """What only some types do is a capability (task_types/capabilities.py), not a core member."""
    core = {name for name in vars(task_types.TaskType) if not name.startswith("__")}
    assert len(core) <= 15, sorted(core)


def test_no_task_type_module_imports_a_service_or_a_view():
    import ast
    import pathlib

    package = pathlib.Path(task_types.__file__).parent
    for path in package.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not any(part in node.module.split(".") for part in ("services", "views", "selectors")), f"{path.name} imports {node.module}"


def test_a_crowd_workers_unconfirmed_response_never_reaches_combine_or_agreement(db):
    job = make_live_job(make_corpus(dialogs=1, user_turns=1), task_type="hard_score", redundancy=2)
    worker = Worker.objects.create(provider="prolific", external_id="PID-forged")
    slot = claim_next_slot(job=job, worker=worker)
    from annotation.services.claims import submit_response

    submit_response(slot_id=slot.pk, worker=worker, answers={"criterion_1": 5, "criterion_2": 5})
    assert combined_items(job) == [] and job_agreement(job) == []


def test_the_api_gives_every_jobs_agreement_per_question(db, make_annotator, organizer):
    """Two raters who agree on one question and disagree on the other: alpha per question, ordinal."""
    from rest_framework.test import APIClient

    job = make_live_job(make_corpus(dialogs=3, user_turns=1), task_type="hard_score", redundancy=2)
    plan = {0: (5, 1), 1: (3, 5), 2: (1, 3)}  # criterion_1 agrees perfectly; criterion_2 crosses
    for n in range(2):
        worker = make_annotator(f"r{n}")[1]
        while (slot := claim_next_slot(job=job, worker=worker)) is not None:
            a, b = plan[slot.item.position]
            from annotation.services.claims import submit_response

            submit_response(slot_id=slot.pk, worker=worker, answers={"criterion_1": a, "criterion_2": b if n == 0 else 6 - b})
    client = APIClient()
    client.force_authenticate(organizer)
    rows = {row["question"]: row for row in client.get(f"/api/jobs/{job.pk}/agreement/").json()}
    assert rows["criterion_1"]["alpha"] == 1.0 and rows["criterion_1"]["level"] == "ordinal" and rows["criterion_1"]["units"] == 3
    assert rows["criterion_2"]["alpha"] < 0  # systematic disagreement
    assert rows["criterion_1"]["ci_low"] == rows["criterion_1"]["ci_high"] == 1.0  # every resample agrees perfectly too
    assert rows["criterion_2"]["ci_low"] <= rows["criterion_2"]["alpha"] <= rows["criterion_2"]["ci_high"]
    rewrite = make_live_job(make_corpus(name="other"))
    assert client.get(f"/api/jobs/{rewrite.pk}/agreement/").json() == []


def _scripted_relay():
    from annotation.chat_relay import ChatRelay

    class ScriptedRelay(ChatRelay):
        """A relay that needs no system: every conversation already holds one exchange."""

        def transcript(self, endpoint, session_key):
            return {"turns": [{"role": "user", "text": f"a cheap place {HOSTILE}", "failed": False, "offered": None},
                              {"role": "system", "text": f"Golden Wok. {HOSTILE}", "failed": False, "offered": {"name": "Golden Wok"}}], "ended": True}

    return ScriptedRelay()


CHAT = {"goal": {"restaurant": {"info": {"food": "chinese"}}}, "goal_text": [f"Find a chinese restaurant. {HOSTILE}"], "goal_id": "g1", "endpoint": "e1", "relay": "contract-test"}


class TestChat(TaskTypeContract):
    key = "chat"
    bad_fields = {"outcome_reason", "understanding", "appropriateness_reason"}

    @pytest.fixture(autouse=True)
    def _relay(self):
        from annotation.extensions import chat_relays

        with chat_relays.override("contract-test", _scripted_relay()):
            yield

    def make_job(self, make_annotator):
        return _payload_job(self.key, [CHAT, {**CHAT, "endpoint": "e2"}])

    def good_answers(self, item, n):
        return {"outcome": ["success", "fail"][n % 2], "outcome_reason": "no booking" if n % 2 else "",
                "understanding": str(4 + n % 2), "understanding_reason": "got the food type",
                "appropriateness": "3", "appropriateness_reason": "terse"}

    def bad_answers(self, item):
        return {"outcome": "fail", "understanding": "9", "appropriateness": "3"}
