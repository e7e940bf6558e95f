import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "evaluation"
DSTC9 = FIXTURES / "dstc9"


@pytest.fixture
def dstc9_copy(tmp_path):
    """A writable copy of the DSTC9 fixtures, for tests that break a file on purpose."""
    target = tmp_path / "dstc9"
    shutil.copytree(DSTC9, target)
    return target


@pytest.fixture
def test_set(db):
    from evaluation.campaigns.services.imports import import_test_set

    return import_test_set("DSTC9 Track 1", "test", DSTC9 / "labels.json", DSTC9 / "knowledge.json")


@pytest.fixture
def campaign(test_set):
    from evaluation.campaigns.services.campaigns import create_campaign
    from evaluation.campaigns.services.imports import import_human_eval

    campaign = create_campaign("human-eval", test_set, [])
    import_human_eval(campaign, DSTC9 / "human_eval")
    campaign.refresh_from_db()
    return campaign


@pytest.fixture
def rotations_by_name(monkeypatch):
    """Each rater's claim rotation taken from their name instead of their database id. Ids depend on
    which tests ran before in the same database, and a test that checks what an adaptive look
    decided depends on who rated which item; with this its outcome is the same in every order."""
    from annotation.models import Worker
    from annotation.task_types import questionnaire

    by_id = questionnaire.rotation_offset
    names: dict[int, str] = {}

    def by_name(job_id, worker_id, span):
        if worker_id not in names:
            names[worker_id] = Worker.objects.values_list("external_id", flat=True).get(pk=worker_id)
        return by_id(0, names[worker_id], span)

    monkeypatch.setattr(questionnaire, "rotation_offset", by_name)
