"""Kill the process in the middle of posting 500 HITs, and in the middle of paying bonuses; after a
restart and reconciliation there is not one duplicate HIT and not one double payment.

Quorum runs in subprocesses (tests/hits/crash_scenario.py) against a SQLite file; the fake provider
runs here, so it outlives the killed process and counts what really reached it.
"""
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from hits.fakes import FakeMTurk, FakeProlific

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def _env(tmp_path, **extra):
    env = dict(os.environ)
    env.update(
        QUORUM_ENV="test",
        DJANGO_SETTINGS_MODULE="tests.hits.process_settings",
        DATABASE_URL=f"sqlite:///{tmp_path / 'crash.sqlite3'}",
        QUORUM_VAR_DIR=str(tmp_path),
        AWS_ACCESS_KEY_ID="AKIAFAKEFAKEFAKE",
        AWS_SECRET_ACCESS_KEY="fake-secret",
        QUORUM_MTURK_CALLS_PER_SECOND="2000",
        PROLIFIC_TOKEN="crash-token",
        CELERY_TASK_ALWAYS_EAGER="true",
        **extra,
    )
    env.pop("AWS_PROFILE", None)
    return env


def _run(env, *args, timeout=240):
    done = subprocess.run(
        [sys.executable, "-m", "tests.hits.crash_scenario", *args], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def _kill_when(env, args, reached, timeout=120):
    proc = subprocess.Popen([sys.executable, "-m", "tests.hits.crash_scenario", *args], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + timeout
    while not reached() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    still_running = proc.poll() is None
    proc.kill()  # SIGKILL: no cleanup, no finally blocks
    proc.wait()
    assert still_running, f"the process ended before it could be killed: {proc.stderr.read()[-2000:]}"


def test_kill_mid_posting_500_hits_then_reconcile_gives_no_duplicate(tmp_path):
    with FakeMTurk(latency=0.01, seed=3) as fake:
        env = _env(tmp_path, QUORUM_MTURK_ENDPOINT_URL=fake.url, CRASH_PROVIDER="mturk", CRASH_CONCURRENCY="4")
        _run(env, "migrate")
        _run(env, "setup-post", "500")
        _kill_when(env, ["post"], lambda: fake.calls["CreateHITWithHITType"] >= 150)
        made_before_restart = len(fake.hits)
        assert 0 < made_before_restart < 500

        _run(env, "reconcile")
        report = json.loads(_run(env, "report"))

    assert report["postings"]["created"] == 500 and report["postings"]["intended"] == 0
    assert report["distinct_external_ids"] == 500
    assert len(fake.hits) == 500 and fake.duplicate_hits() == 0


def test_kill_mid_mturk_bonuses_then_reconcile_pays_each_once(tmp_path):
    with FakeMTurk(latency=0.01, seed=4) as fake:
        env = _env(tmp_path, QUORUM_MTURK_ENDPOINT_URL=fake.url, CRASH_PROVIDER="mturk", CRASH_FAKE_URL=fake.url)
        _run(env, "migrate")
        _run(env, "setup-bonus", "200")
        _kill_when(env, ["bonus"], lambda: len(fake.bonuses) >= 60)
        assert 0 < len(fake.bonuses) < 200

        _run(env, "reconcile")
        _run(env, "bonus")  # the organizer repeats the bulk action after the restart
        report = json.loads(_run(env, "report"))

    per_assignment = fake.bonuses_per_assignment()
    assert len(per_assignment) == 200 and max(per_assignment.values()) == 1
    assert report["bonus_payments"] == 200 and report["payments"]["confirmed"] == 200


def test_kill_mid_prolific_bonuses_never_pays_twice(tmp_path):
    with FakeProlific(token="crash-token", latency=0.01, seed=5) as fake:
        env = _env(tmp_path, QUORUM_PROLIFIC_API_URL=fake.url, CRASH_PROVIDER="prolific", CRASH_FAKE_URL=fake.url)
        _run(env, "migrate")
        _run(env, "setup-bonus", "120")
        _kill_when(env, ["bonus"], lambda: len(fake.paid) >= 40)

        _run(env, "reconcile")
        _run(env, "bonus")
        _run(env, "reconcile")
        report = json.loads(_run(env, "report"))

    paid = Counter(pid for _, pid, _ in fake.paid)
    assert max(paid.values()) == 1  # zero double payments
    # Each bonus is either confirmed paid, or (killed between "sent" and the call) flagged for a human.
    assert report["payments"]["confirmed"] == len(paid)
    assert report["payments"]["confirmed"] + report["needs_attention"] == 120
    assert report["needs_attention"] <= 1
