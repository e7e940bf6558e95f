"""What holds of every task type at once. The contract each type passes is
`task_types/contract.py`; each type's own subclass of it, with its examples, is in its own
`task_types/test_<key>.py`, found by `contracts()`: a registered type without one fails
`test_every_registered_task_type_has_a_contract_test`. What only some types do (their capabilities)
has a suite each in `task_types/test_capabilities.py`.
"""

from annotation import task_types
from annotation.models import Worker
from annotation.selectors.quality import combined_items, job_agreement
from annotation.services.claims import claim_next_slot
from tests.factories import make_corpus, make_live_job

from .task_types.contract import contracts


def test_every_registered_task_type_has_a_contract_test():
    found = contracts()
    missing = sorted(set(task_types.registry()) - set(found))
    assert missing == [], (
        f"no contract test for {', '.join(missing)}: add tests/annotation/task_types/test_<key>.py with a "
        "TaskTypeContract subclass (task_types/contract.py) whose key is the type's"
    )
    assert set(found) <= set(task_types.registry()), "a contract test for a type that is not registered"


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
    # Three items are too few for a 95% interval: none, and the reason in words.
    assert rows["criterion_1"]["ci_low"] is None and rows["criterion_1"]["ci_withheld"] == "no interval: too few units, 3 of the 30 needed"
    rewrite = make_live_job(make_corpus(name="other"))
    assert client.get(f"/api/jobs/{rewrite.pk}/agreement/").json() == []
