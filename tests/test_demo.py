"""`manage.py demo --no-serve` runs the main job end to end on the embedded default (SQLite)."""
import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.sqlite_template import migrated_sqlite

ROOT = Path(__file__).resolve().parents[1]


MANAGE = [sys.executable, "manage.py"]
DATABASE = "quorum.sqlite3"


def _env(var_dir):
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    # `make demo` runs with QUORUM_ENV=development; test differs from it only in the password hasher
    # (settings.py), and the demo's logins would otherwise spend more CPU in PBKDF2 than in the job.
    env.update(QUORUM_ENV="test", QUORUM_VAR_DIR=str(var_dir), QUORUM_SYSTEM_ALLOWED_HOSTS="127.0.0.1")
    return env


@pytest.fixture(scope="module")
def migrated():
    """Where a freshly migrated SQLite database comes from: each run copies the suite's migrated
    template (tests/sqlite_template.py, built once per change of the migrations and shared with the
    crash tests) rather than migrating again, which is the same database at a fraction of the cost.
    Asked for at each copy: a run on other migrations replaces it."""
    return migrated_sqlite


def run_demo(migrated, var_dir, out, *args):
    """Run the demo without serving on a copy of the migrated database under var_dir; (summary, stdout)."""
    var_dir.mkdir(parents=True)
    shutil.copyfile(migrated(), var_dir / DATABASE)
    proc = subprocess.run(
        [*MANAGE, "demo", "--no-serve", "--out", str(out), "--json", *args],
        cwd=ROOT, env=_env(var_dir), capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    # The console reads as the demo's own steps: no worker's "Task NAME[id] succeeded" line between them.
    assert " succeeded in " not in proc.stderr, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stdout


#: The main test's run, with the demo's default seed said out loud: the seed test runs it again.
MAIN_RUN = ("--dialogs", "12", "--seed", "7")


@pytest.fixture(scope="module")
def main_run(migrated, tmp_path_factory):
    """The demo run the main test checks and the seed test repeats: (summary, stdout, its folder)."""
    folder = tmp_path_factory.mktemp("demo")
    summary, stdout = run_demo(migrated, folder / "var", folder / "exports", *MAIN_RUN)
    return summary, stdout, folder


@pytest.mark.slow
def test_demo_completes_the_rewrite_job_over_http_and_exports_variation_sets(main_run):
    summary, stdout, tmp_path = main_run
    out = tmp_path / "exports"
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
    # Flags a reviewer can trust: no careful annotator is flagged (careless ones may be).
    careless = {name for name, row in summary["per_annotator"].items() if row["careless"]}
    assert set(summary["flagged_annotators"]) <= careless, summary["flagged_annotators"]
    # Issue 22: the careless ones are flagged, each with the evidence, and reliability is printed per annotator.
    assert careless <= set(summary["flagged_annotators"]), summary["flagged_annotators"]
    for name in careless:
        codes = {f["code"] for f in summary["reliability"][name]["flags"]}
        assert codes & {"unreliable_voter", "voted_down"}, summary["reliability"][name]
    assert "Reliability (Dawid-Skene" in stdout and "spammer score" in stdout
    assert f"Worker flags (stored for the job page): {summary['flagged_workers']} of 6 annotators flagged" in stdout
    # It leaves work: an open rewrite job and an open rating job, with items for every printed login.
    assert set(summary["open_work"]) == {f"annotator{i}" for i in range(1, 7)}
    for username, jobs in summary["open_work"].items():
        assert {j["task_type"] for j in jobs} == {"rewrite", "hard_score"}, username
        assert all(j["items"] == 6 for j in jobs), jobs  # 2 dialogs x 3 user turns, one slot per login
        assert f"     {username}: Demo: rewrites for you to write (rewrite): 6 items;" in stdout
    # One spoken-reading item, read four times in synthesised speech through the work page: a silent
    # first take refused with what to fix, then every reading stored and transcribed.
    spoken = summary["spoken"]
    assert any("Reading 1: The recording is silent" in m for m in spoken["refused_first"]), spoken["refused_first"]
    assert [r["reading"] for r in spoken["readings"]] == [1, 2, 3, 4]
    assert all(r["wer"] is not None and not r["error"] for r in spoken["readings"]), spoken["readings"]
    assert sum(bool(r["asr"]) for r in spoken["readings"]) >= 3, spoken["readings"]
    assert "ASR heard" in stdout
    # The interactive part: both reference systems on local ports, 6 goals x 2 systems chatted through
    # the work pages, and the leaderboard printed; the weaker variant (it ignores the area) is below.
    chats = summary["parts"]["run_interactive_demo"]
    assert chats["dialogs"] == 12
    board = {row["system"]: row for row in chats["leaderboard"]}
    assert board["reference-restaurant"]["grounded_success"] == 1.0
    assert board["reference-restaurant-weaker"]["grounded_success"] == pytest.approx(4 / 6)  # stored whole, rounded only for people
    assert "the interactive leaderboard:" in stdout and "| reference-restaurant-weaker | 6 |" in stdout


@pytest.mark.slow
def test_demo_with_a_seed_gives_the_same_run_twice(migrated, main_run, tmp_path):
    first = copy.deepcopy(main_run[0])
    second, _ = run_demo(migrated, tmp_path / "var", tmp_path / "exports", *MAIN_RUN)
    for summary in (first, second):
        del summary["export_dir"]  # where it was written, which differs on purpose
    assert first == second
    assert first["refused_submissions"] > 0 and first["voting"]["votes"] > 0


def test_demo_refuses_bad_options_before_doing_anything(tmp_path):
    env = _env(tmp_path / "var")
    for args, message in [
        (["--dialogs", "0"], "--dialogs must be at least 1"),
        (["--open-dialogs", "30", "--dialogs", "5"], "--open-dialogs cannot exceed --dialogs"),
        (["--careless", "-1"], "--careless cannot be negative"),
        (["--seed", "x"], "invalid int value"),
    ]:
        proc = subprocess.run([*MANAGE, "demo", "--no-serve", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode != 0 and message in proc.stderr, (args, proc.stderr[-500:])
    assert not (tmp_path / "var" / "demo").exists()  # nothing simulated, imported or written
