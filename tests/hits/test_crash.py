"""Kill the process in the middle of posting 500 HITs, of paying bonuses, of approving and of
rejecting; after a restart and reconciliation there is not one duplicate HIT, not one double payment
and not one assignment settled twice — also when the restart comes after the provider has forgotten
the request tokens (24 hours on MTurk), so that only listing what exists can tell.

Quorum runs in processes of its own (tests/hits/crash_scenario.py, forked by
tests/hits/crash_processes.py from a server that has the libraries loaded) against a SQLite file and against a
PostgreSQL database of its own; the fake provider runs here, so it outlives the killed process and
counts what really reached it. The kill is made to land in the window that matters: the fake carries
out calls but holds back their answers (`hold_replies`), so at the kill the provider has done
something Quorum has not recorded — and each test checks that it had.
"""
import json
import os
import shutil
import time
import uuid
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from hits.fakes import FakeMTurk, FakeProlific
from tests import sqlite_template

from .crash_processes import Step, run_step

pytestmark = pytest.mark.slow
KILL_WINDOW_LATENCY = 0.01  # seconds the fake takes per call while a step is to be killed


def _env(database_url, tmp_path, **extra):
    env = dict(os.environ)
    env.update(
        QUORUM_ENV="test",
        DJANGO_SETTINGS_MODULE="tests.hits.process_settings",
        DATABASE_URL=database_url,
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
    return run_step(env, args, Path(env["QUORUM_VAR_DIR"]) / "steps", timeout=timeout)


# --- a migrated database per test, on each backend ---------------------------------------------------


def _postgres_admin():
    """(psycopg connection to the server's maintenance database, base URL) from the suite's DATABASE_URL."""
    import psycopg

    url = urlsplit(os.environ["DATABASE_URL"])
    admin = psycopg.connect(urlunsplit(url._replace(path="/postgres")), autocommit=True)
    return admin, url


@pytest.fixture(scope="module")
def _migrated():
    """A migrated database per backend, to be copied for each test: the suite's own templates, built
    once per change of the migrations and shared by the test processes of a run (and later runs).
    On PostgreSQL tests/db_template.py's, which every test database of the run is copied from; on
    SQLite tests/sqlite_template.py's, which the demo tests copy too. Each is asked for at each
    copy: a run on other migrations replaces it."""

    def get(backend):
        if backend == "postgres":
            from django.conf import settings

            from tests import db_template

            return db_template.ensure_template(settings.DATABASES["default"])
        return sqlite_template.migrated_sqlite()

    return get


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request, _migrated, tmp_path):
    """A freshly migrated database for the Quorum processes of one test: its DATABASE_URL."""
    template = _migrated(request.param)
    if request.param == "sqlite":
        path = tmp_path / "crash.sqlite3"
        shutil.copy(template, path)
        yield f"sqlite:///{path}"
        return
    admin, url = _postgres_admin()
    # Named after the suite's database, not the template: a name under the template's prefix would
    # read as an earlier template to tests/db_template.py, which drops those.
    name = f"{url.path.lstrip('/')}_crash_{uuid.uuid4().hex[:8]}"
    admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    try:
        yield urlunsplit(url._replace(path=f"/{name}"))
    finally:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


def _kill_in_the_window(env, args, fake, reached, done_at_provider, timeout=120, hold=""):
    """Run a step and SIGKILL it once `reached()`: first the fake holds its answers back, and the kill
    waits until a call has been carried out at the provider after that, so the process dies between
    a provider call and its local record. Returns how many calls the provider had carried out.

    The fake takes `KILL_WINDOW_LATENCY` per call during this step only, so that the step is still
    running when `reached()` is seen; the other steps' calls (the reconciliation lists every
    posting) are answered at once."""
    fake.latency = KILL_WINDOW_LATENCY
    step = Step(env, args, Path(env["QUORUM_VAR_DIR"]) / "steps")
    try:
        deadline = time.monotonic() + timeout
        while not reached() and step.alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        fake.hold_replies(hold)
        held_at = done_at_provider()
        while done_at_provider() == held_at and step.alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        still_running = step.alive()
        step.kill()  # SIGKILL: no cleanup, no finally blocks
        step.wait()
    finally:
        fake.release_replies()
        fake.latency = 0.0
    assert still_running, f"the process ended before it could be killed: {step.stderr[-2000:]}"
    assert done_at_provider() > held_at, "no call reached the provider while its answer was held"
    return done_at_provider()


def _settled_at(fake, status):
    return sum(a["AssignmentStatus"] == status for a in list(fake.assignments.values()))


@pytest.mark.parametrize("tokens", ["remembered", "forgotten"])
def test_kill_mid_posting_500_hits_then_reconcile_gives_no_duplicate(database, tmp_path, tokens):
    """`forgotten`: the restart comes after MTurk's 24 hours, so the repeat of a HIT created just
    before the kill is not caught by its token: reconciliation must find it by listing the HITs."""
    with FakeMTurk(seed=3) as fake:
        env = _env(database, tmp_path, QUORUM_MTURK_ENDPOINT_URL=fake.url, CRASH_PROVIDER="mturk", CRASH_CONCURRENCY="4")
        _run(env, "setup-post", "500")
        made = _kill_in_the_window(env, ["post"], fake, lambda: fake.calls["CreateHITWithHITType"] >= 150, lambda: len(fake.hits))
        assert 0 < made < 500
        at_kill = json.loads(_run(env, "report"))
        assert at_kill["postings"]["created"] < made, "the kill did not land between a HIT's creation and its record"
        if tokens == "forgotten":
            _run(env, "age", "25")
            fake.forget_tokens()

        _run(env, "reconcile")
        report = json.loads(_run(env, "report"))

    assert report["postings"]["created"] == 500 and report["postings"]["intended"] == 0
    assert report["distinct_external_ids"] == 500
    assert len(fake.hits) == 500 and fake.duplicate_hits() == 0
    if tokens == "forgotten":
        assert fake.calls["ListHITs"] > 0  # found by listing, not by the token


@pytest.mark.parametrize("tokens", ["remembered", "forgotten"])
def test_kill_mid_mturk_bonuses_then_reconcile_pays_each_once(database, tmp_path, tokens):
    """`forgotten`: a bonus sent just before the kill is repeated after MTurk forgot its token; only
    the listing of the assignment's bonuses (the reference in their reason) keeps it from paying twice."""
    with FakeMTurk(seed=4) as fake:
        env = _env(database, tmp_path, QUORUM_MTURK_ENDPOINT_URL=fake.url, CRASH_PROVIDER="mturk", CRASH_FAKE_URL=fake.url)
        _run(env, "setup-bonus", "200")
        paid = _kill_in_the_window(env, ["bonus"], fake, lambda: len(fake.bonuses) >= 60, lambda: len(fake.bonuses))
        assert 0 < paid < 200
        at_kill = json.loads(_run(env, "report"))
        assert at_kill["payments"]["confirmed"] < paid and at_kill["payments"]["sent"] == 1
        if tokens == "forgotten":
            _run(env, "age", "25")
            fake.forget_tokens()

        _run(env, "reconcile")
        _run(env, "bonus")  # the organizer repeats the bulk action after the restart
        report = json.loads(_run(env, "report"))

    per_assignment = fake.bonuses_per_assignment()
    assert len(per_assignment) == 200 and max(per_assignment.values()) == 1
    assert report["bonus_payments"] == 200 and report["payments"]["confirmed"] == 200
    if tokens == "forgotten":
        assert fake.calls["ListBonusPayments"] > 0


def test_kill_mid_prolific_bonuses_never_pays_twice(database, tmp_path):
    with FakeProlific(token="crash-token", seed=5) as fake:
        env = _env(database, tmp_path, QUORUM_PROLIFIC_API_URL=fake.url, CRASH_PROVIDER="prolific", CRASH_FAKE_URL=fake.url)
        _run(env, "setup-bonus", "120")
        # Only the paying call is held: Prolific's bonus is set up by one call and paid by another.
        paid = _kill_in_the_window(env, ["bonus"], fake, lambda: len(fake.paid) >= 40, lambda: len(fake.paid), hold="/pay")
        at_kill = json.loads(_run(env, "report"))
        assert at_kill["payments"]["confirmed"] < paid

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


@pytest.mark.parametrize("action, status", [("approve", "Approved"), ("reject", "Rejected")])
def test_kill_mid_settling_then_reconcile_settles_each_once(database, tmp_path, action, status):
    """MTurk refuses to settle an assignment twice; after the kill the repeat must read that the
    assignment already holds our decision and record it, not fail it or decide otherwise."""
    with FakeMTurk(seed=6) as fake:
        env = _env(database, tmp_path, QUORUM_MTURK_ENDPOINT_URL=fake.url, CRASH_PROVIDER="mturk", CRASH_FAKE_URL=fake.url)
        _run(env, "setup-bonus", "50")
        settled = _kill_in_the_window(env, [action], fake, lambda: _settled_at(fake, status) >= 15, lambda: _settled_at(fake, status))
        assert 0 < settled < 50
        at_kill = json.loads(_run(env, "report"))
        assert at_kill["settled"][action] < settled, "the kill did not land between a settlement and its record"

        _run(env, "reconcile")
        _run(env, action)  # the organizer repeats the bulk action after the restart
        report = json.loads(_run(env, "report"))

    assert _settled_at(fake, status) == 50 and _settled_at(fake, "Submitted") == 0
    assert fake.calls["ApproveAssignment" if action == "approve" else "RejectAssignment"] >= 50
    assert report["settled"][action] == 50 and report["payments"]["failed"] == 0
    assert report["assignments"]["approved" if action == "approve" else "rejected"] == 50
