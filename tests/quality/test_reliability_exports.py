"""Exports say how sure (issue 22): items.csv's model columns, worker_reliability.csv, the rule in the card."""
import csv
import json

import pytest

from annotation.services.exports import export_job
from annotation.services.quality import apply_flags

from .test_reliability_sweep import _run, crowd  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db


def _rows(path):
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def test_the_vote_jobs_export_has_the_posterior_beside_the_majority_and_the_workers(crowd, tmp_path):  # noqa: F811
    job, vote_job = _run(crowd)
    apply_flags(vote_job)
    apply_flags(job)
    files = export_job(vote_job, tmp_path / "votes")
    assert "worker_reliability.csv" in files
    items = _rows(tmp_path / "votes" / "items.csv")
    model_columns = [c for c in items[0] if c.endswith("_model")]
    assert model_columns and all(f"{c}_confidence" in items[0] for c in model_columns)
    assert {row[model_columns[0]] for row in items} <= {"for", "against", ""}
    workers = _rows(tmp_path / "votes" / "worker_reliability.csv")
    yes_man = next(r for r in workers if r["worker"].endswith(crowd["yes_man"].external_id) and r["role"] == "voter")
    assert float(yes_man["spammer_score"]) < 0.2
    assert any(r["role"] == "writer" for r in workers)
    manifest = json.loads((tmp_path / "votes" / "manifest.json").read_text())
    assert manifest["decision"]["rule"] == "published"
    assert "published rule (CGoDial): 2 or more of 3 votes against" in (tmp_path / "votes" / "README.md").read_text()


def test_the_test_set_export_says_which_rule_decided(crowd, tmp_path):  # noqa: F811
    job, _ = _run(crowd)
    export_job(job, tmp_path / "rewrites")
    readme = (tmp_path / "rewrites" / "README.md").read_text()
    assert "## Who decided, and how sure" in readme and "published rule" in readme
    assert _rows(tmp_path / "rewrites" / "worker_reliability.csv") == []  # no flag run yet: the header only
