"""`manage.py demo --no-serve` runs the main job end to end on the embedded default (SQLite)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_demo_completes_the_rewrite_job_over_http_and_exports_variation_sets(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    env.update(QUORUM_ENV="development", QUORUM_VAR_DIR=str(tmp_path / "var"))
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    out = tmp_path / "exports"
    proc = subprocess.run(
        [*manage, "demo", "--no-serve", "--out", str(out), "--dialogs", "12", "--json"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["items"] == 36 and summary["items_complete"] == 36
    # Redundancy 2, plus a new rewrite for every one voted down and re-collected.
    voting = summary["voting"]
    assert summary["responses"] == 72 + voting["recollected"]
    assert summary["refused_submissions"] > 0, "careless annotators should have been refused"
    assert voting["voted_down"] > 0 and voting["recollected"] > 0, "sloppy rewrites should have been voted down"
    assert voting["votes"] == 3 * voting["responses_reviewed"]
    assert voting["vote_alpha"] is not None and 0 < voting["vote_alpha"] <= 1
    job_dir = Path(summary["export_dir"])
    assert job_dir.parent == out
    for variant in ("paraphrase", "typos", "verbose", "simplified"):
        data = json.loads((job_dir / variant / "data.json").read_text())
        assert len(data) == 12
        first_dialog = next(iter(data.values()))
        assert first_dialog["log"][1]["text"].endswith("Shall I book a table?")  # system turns unchanged
    generated = json.loads(sorted((tmp_path / "var" / "demo").glob("restaurants-*.json"))[0].read_text())
    source_turn = next(iter(generated.values()))["log"][0]["text"]
    verbose_turn = next(iter(json.loads((job_dir / "verbose" / "data.json").read_text()).values()))["log"][0]["text"]
    assert verbose_turn != source_turn and len(verbose_turn.split()) > len(source_turn.split())
    assert (job_dir / "responses.csv").read_text().count("\n") == summary["responses"] + 1  # header + one row each
