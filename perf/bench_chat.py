"""Benchmark of interactive evaluation (issue 12): 50 concurrent chats relayed by Quorum to a
system that answers every turn in 200 ms.

The system is Quorum's reference restaurant system in its own process (`--delay 0.2`). Baseline,
measured in the same run: the same 50 clients calling the system directly with Quorum's signed
client (the bare system latency). Then 50 simulated workers, each logged in with a claimed chat,
send their turns through the work page's relay (`/work/<token>/chat/`) on gunicorn (gthread) and
PostgreSQL. Reported: the turn latency a worker sees (p50, p99), the system's own latency per turn
as the relay recorded it, the latency Quorum adds per turn (seen minus the bare system's, p50 and
p99), the same for one chat alone (Quorum's own cost per turn, without queueing), the throughput,
and lost turns: messages acknowledged to a worker without a recorded user turn and system reply.
With 50 chats on a 2-core machine the added latency is queueing for the CPU (turns/s is the
ceiling), so the load average of the machine is recorded with the figures.
"""
import json
import multiprocessing
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from .common import ROOT, free_port, fresh_database, save, server_env

CLIENT_PROCESSES, THREADS_PER_PROCESS = 5, 10
CHATS = CLIENT_PROCESSES * THREADS_PER_PROCESS
TURNS = int(os.environ.get("QUORUM_BENCH_CHAT_TURNS", "20"))  # user turns per chat
SYSTEM_DELAY = 0.2
SECRET = "bench-secret-of-enough-length"
DB_NAME = os.environ.get("QUORUM_BENCH_CHAT_DB", "quorum_bench_chat")
MESSAGES = ["I want chinese food in the centre", "what about thai food in the north", "book it for 2 people", "what is the phone number"]




def _start_system():
    proc = subprocess.Popen(
        [sys.executable, "-m", "evaluation.interactive.systems.reference", "--port", "0", "--secret", SECRET, "--delay", str(SYSTEM_DELAY)],
        cwd=ROOT, env={**os.environ, "QUORUM_ENV": "test"}, stdout=subprocess.PIPE, text=True,
    )
    line = proc.stdout.readline()
    found = re.search(r"(http://127\.0\.0\.1:\d+)", line)
    if not found:
        proc.kill()
        raise RuntimeError(f"the reference system did not start: {line!r}")
    return proc, found.group(1)


def _prepare(system_url):
    """A fresh database: the system registered (its contract check passes), one goal, a chat job of
    CHATS dialogs, and CHATS annotators."""
    fresh_database(DB_NAME)
    code = r"""
import django, json
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from django.contrib.auth import get_user_model
from quorum.roles import make_annotator
from evaluation.interactive.services.chats import create_chat_job
from evaluation.interactive.services.systems import import_goals, register_system
system = register_system(name="bench-system", url=%r, secret=%r)
goals = import_goals(name="bench", goals_file=b'{"id": "g1", "goal": {"restaurant": {"info": {"food": "chinese", "area": "centre"}}}}\n')
job = create_chat_job(name="bench chats", systems=[system], goal_set=goals, dialogs_per_goal=%d + 1)
User = get_user_model()
for i in range(%d + 1):
    make_annotator(User.objects.create_user(f"bench{i}", password="bench-pass"))
print(json.dumps({"job": job.pk, "check_passed": system.check_passed}))
""" % (system_url, SECRET, CHATS, CHATS)  # noqa: UP031  (a code template with braces of its own)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=server_env(DB_NAME), capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def _client_process(args):
    """THREADS_PER_PROCESS chats (or bare system sessions), each TURNS turns, as fast as answered."""
    import threading

    import requests

    from evaluation.interactive.systems.client import SystemClient, SystemFailure

    mode, base, job_id, first_user, n_threads = args
    results, lock = [], threading.Lock()

    def chat(user_index):
        latencies, errors, sent, session_key = [], [], 0, None
        try:
            if mode == "bare":
                client = SystemClient(base, SECRET, timeout=30)
                key = f"bare-{user_index}"
                client.open(key)
                history, state = [], None
                for turn in range(TURNS):
                    text = MESSAGES[turn % len(MESSAGES)]
                    t = time.perf_counter()
                    reply = client.turn(key, turn, text, history, state)
                    latencies.append(time.perf_counter() - t)
                    sent += 1
                    state = reply.state
                    history += [{"role": "user", "text": text}, {"role": "system", "text": reply.text}]
            else:
                session = requests.Session()
                session.get(f"{base}/accounts/login/", timeout=30)
                csrf = session.cookies.get("csrftoken")
                session.post(f"{base}/accounts/login/", data={"username": f"bench{user_index}", "password": "bench-pass", "csrfmiddlewaretoken": csrf},
                             headers={"Referer": f"{base}/accounts/login/"}, timeout=30)
                page = session.post(f"{base}/jobs/{job_id}/next/", data={"csrfmiddlewaretoken": session.cookies.get("csrftoken")},
                                    headers={"Referer": base + "/"}, timeout=30)
                if "/work/" not in page.url:
                    raise RuntimeError(f"no chat claimed: {page.url}")
                url = page.url.rstrip("/") + "/chat/"
                opened = session.post(url, json={"action": "open"}, timeout=30)
                if opened.status_code != 200:
                    raise RuntimeError(f"open answered {opened.status_code}")
                session_key = page.url.rstrip("/").rsplit("/", 1)[-1]
                for turn in range(TURNS):
                    t = time.perf_counter()
                    r = session.post(url, json={"action": "say", "text": MESSAGES[turn % len(MESSAGES)]}, timeout=30)
                    elapsed = time.perf_counter() - t
                    if r.status_code == 200 and not r.json()["turns"][-1]["failed"]:
                        latencies.append(elapsed)
                        sent += 1
                    else:
                        errors.append(f"{r.status_code} {r.text[:120]}")
        except (requests.RequestException, SystemFailure, RuntimeError, ValueError) as exc:
            errors.append(repr(exc))
        with lock:
            results.append({"latencies": latencies, "errors": errors, "sent": sent, "token": session_key})

    threads = [threading.Thread(target=chat, args=(first_user + i,)) for i in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def _load(mode, base, job_id, alone=False):
    """All CHATS clients at once, or (alone) one more client by itself: the uncontended figure."""
    started = time.time()
    jobs = [(mode, base, job_id, CHATS, 1)] if alone else [(mode, base, job_id, p * THREADS_PER_PROCESS, THREADS_PER_PROCESS) for p in range(CLIENT_PROCESSES)]
    with multiprocessing.get_context("spawn").Pool(len(jobs)) as pool:
        chunks = pool.map(_client_process, jobs)
    rows = [row for chunk in chunks for row in chunk]
    return rows, time.time() - started


def _pct(values, q):
    values = sorted(values)
    return round(values[min(len(values) - 1, int(q * len(values)))], 1) if values else None


def _recorded(job_id):
    """Per recorded turn pair: the system's own latency (ms) and its time window, and per chat the
    user turns and non-failed replies stored, read back from the database after the run."""
    code = r"""
import django, json
django.setup()
from evaluation.models import ChatTurn
rows = list(ChatTurn.objects.values_list("session_id", "role", "user_turn", "failed", "latency_ms"))
print(json.dumps(rows))
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=server_env(DB_NAME), capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def run() -> dict:
    system, system_url = _start_system()
    server = None
    try:
        prepared = _prepare(system_url)
        if not prepared["check_passed"]:
            raise RuntimeError("the reference system failed its contract check")
        bare_rows, bare_seconds = _load("bare", system_url, None)
        port = free_port()
        gunicorn = Path(sys.executable).with_name("gunicorn")
        # gthread: a relayed turn waits on the system, so a worker thread per open chat, not a process.
        server = subprocess.Popen(
            [str(gunicorn), "perf.wsgi_app:application", "--bind", f"127.0.0.1:{port}", "--workers", "4", "--threads", "16",
             "--worker-class", "gthread", "--preload", "--log-level", "warning", "--backlog", "256"],
            cwd=ROOT, env=server_env(DB_NAME),
        )
        base = f"http://127.0.0.1:{port}"
        import requests

        for _ in range(100):
            try:
                requests.get(base + "/accounts/login/", timeout=1)
                break
            except requests.RequestException:
                time.sleep(0.2)
        alone_rows, _alone_seconds = _load("quorum", base, prepared["job"], alone=True)
        ours_rows, ours_seconds = _load("quorum", base, prepared["job"])
        recorded = _recorded(prepared["job"])
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
        system.terminate()
        system.wait(timeout=30)

    bare = [x * 1000 for row in bare_rows for x in row["latencies"]]
    seen = [x * 1000 for row in ours_rows for x in row["latencies"]]
    alone = [x * 1000 for row in alone_rows for x in row["latencies"]]
    system_ms = [r[4] for r in recorded if r[1] == "system" and r[2] is not None and not r[3] and r[4] is not None]
    acknowledged = sum(row["sent"] for row in ours_rows + alone_rows)
    user_turns = sum(1 for r in recorded if r[1] == "user")
    replies = sum(1 for r in recorded if r[1] == "system" and r[2] is not None and not r[3])
    failed = sum(1 for r in recorded if r[1] == "system" and r[3])
    # Added latency per turn: what the worker waited minus what the system took, paired by rank
    # (the two distributions' quantiles): p50 and p99 of each, and their differences.
    figures = {
        "chats": CHATS, "turns_per_chat": TURNS, "system_delay_ms": SYSTEM_DELAY * 1000,
        "server": "gunicorn, 4 gthread workers x 16 threads, PostgreSQL; the system in its own process",
        "bare_system_p50_ms": _pct(bare, 0.5), "bare_system_p99_ms": _pct(bare, 0.99), "bare_turns": len(bare),
        "bare_errors": sum(len(row["errors"]) for row in bare_rows),
        "relayed_turn_p50_ms": _pct(seen, 0.5), "relayed_turn_p99_ms": _pct(seen, 0.99),
        "system_latency_recorded_p50_ms": _pct(system_ms, 0.5), "system_latency_recorded_p99_ms": _pct(system_ms, 0.99),
        "turns_acknowledged": acknowledged, "user_turns_recorded": user_turns, "system_replies_recorded": replies,
        "failed_turns": failed, "lost_turns": acknowledged - min(user_turns, replies),
        "one_chat_alone_turn_p50_ms": _pct(alone, 0.5), "one_chat_alone_turn_p99_ms": _pct(alone, 0.99),
        "relay_errors": sum(len(row["errors"]) for row in ours_rows + alone_rows),
        "error_examples": [e for row in ours_rows + alone_rows + bare_rows for e in row["errors"]][:3],
        "load_average_1min_after": round(os.getloadavg()[0], 2),
        "turns_per_s": round(len(seen) / ours_seconds, 1), "bare_turns_per_s": round(len(bare) / bare_seconds, 1),
    }
    if alone and bare:
        figures["one_chat_alone_added_p50_ms"] = round(figures["one_chat_alone_turn_p50_ms"] - figures["bare_system_p50_ms"], 1)
    if seen and bare:
        figures["added_p50_ms"] = round(figures["relayed_turn_p50_ms"] - figures["bare_system_p50_ms"], 1)
        figures["added_p99_ms"] = round(figures["relayed_turn_p99_ms"] - figures["bare_system_p99_ms"], 1)
    save("chat", figures)
    return figures
