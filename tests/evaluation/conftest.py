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
