"""The typing-flag harness (issue 21): Chromium drives the real work page with scripted behaviour
profiles (`perf/typing_profiles.py`), the page's own `static/typing.js` records, the server checks
and stores the log, the flag run computes the flags, and this reports precision and recall per flag,
the false-flag rate on composed typing and the bytes a field's log takes.

Time runs on Playwright's fake clock (`page.clock`: Date, timers and performance.now), so a
90-second behaviour takes a moment while the page sees its real timing; keys, pastes and drops are
real browser input (a paste through the clipboard, a drop through Chromium's drag events), and
leaving the window is the window's blur and focus events. A run draws a new seed unless
QUORUM_BENCH_TYPING_SEED is set; QUORUM_BENCH_TYPING_RUNS responses per profile (default 20), each
response a rewrite item with four text fields entered by one behaviour.
"""
import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections import Counter

from .common import ROOT, free_port, fresh_database, save, server_env, wait_until_serving
from .typing_profiles import EXPECTED, PRIMARY, PROFILES, actions

DB_NAME = os.environ.get("QUORUM_BENCH_TYPING_DB", "quorum_bench_typing")
RUNS = int(os.environ.get("QUORUM_BENCH_TYPING_RUNS", "20"))
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]


def _prepare(n: int) -> list[dict]:
    """A fresh database with a live rewrite job of n items, each claimed by its own crowd worker:
    [{"url": work path, "answers": {field: text}}]."""
    fresh_database(DB_NAME)
    code = r"""
import django, json
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from django.urls import reverse
from annotation.models import Worker
from annotation.services.claims import claim_next_slot
from annotation.work_tokens import make_token
from tests.factories import good_answers, make_corpus, make_live_job
job = make_live_job(make_corpus(dialogs=%d, user_turns=1), name="typing harness")
out = []
for i in range(%d):
    worker = Worker.objects.create(provider="prolific", external_id=f"harness-{i}")
    slot = claim_next_slot(job=job, worker=worker)
    out.append({"url": reverse("work", args=[make_token(slot)]), "answers": good_answers(slot.item), "slot": slot.pk})
print(json.dumps({"job": job.pk, "work": out}))
""" % (n, n)  # noqa: UP031  (a code template with braces of its own)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=server_env(DB_NAME), capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def _perform(page, cdp, field, steps) -> None:
    for step in steps:
        kind = step[0]
        if kind == "wait":
            page.clock.run_for(max(int(step[1]), 0))
        elif kind == "key":
            page.keyboard.press("Space" if step[1] == " " else step[1])
        elif kind == "backspace":
            page.keyboard.press("Backspace")
        elif kind == "paste":
            page.evaluate("t => navigator.clipboard.writeText(t)", step[1])
            page.keyboard.press("ControlOrMeta+V")
        elif kind == "blur_away":
            field.evaluate("el => el.blur()")
            page.evaluate("() => window.dispatchEvent(new Event('blur'))")
            page.clock.run_for(int(step[1]))
            page.evaluate("() => window.dispatchEvent(new Event('focus'))")
        elif kind == "drop":
            box = field.bounding_box()
            x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
            data = {"items": [{"mimeType": "text/plain", "data": step[1]}], "dragOperationsMask": 1}
            for event in ("dragEnter", "dragOver", "drop"):
                cdp.send("Input.dispatchDragEvent", {"type": event, "x": x, "y": y, "data": data})
        elif kind == "set":
            script = "([el, t, fire]) => { el.value = t; if (fire) el.dispatchEvent(new Event('input', {bubbles: true})); }"
            page.evaluate(script, [field.element_handle(), step[1], step[2]])


def _drive(base: str, work: list[dict], plan: list[str], rng: random.Random) -> list[dict]:
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    results = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        for entry, profile in zip(work, plan, strict=True):
            try:
                results.append(_one(browser, base, entry, profile, rng))
            except Exception as exc:  # noqa: BLE001 - a run that breaks is counted, not fatal
                results.append({"profile": profile, "slot": entry["slot"], "posted": "", "error": repr(exc)[:300]})
        browser.close()
    return results


def _one(browser, base: str, entry: dict, profile: str, rng: random.Random) -> dict:
    """One response: a fresh browser context on its work page, the profile's behaviour in each field, submit."""
    context = browser.new_context(base_url=base)
    try:
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base)
        page = context.new_page()
        page.clock.install()
        page.goto(entry["url"])
        cdp = context.new_cdp_session(page)
        for name, text in entry["answers"].items():
            field = page.locator(f'[name="{name}"]')
            field.click()
            _perform(page, cdp, field, actions(profile, text, rng))
        logged = page.evaluate("() => { window.QuorumTyping.write(); return document.getElementById('typing_log').value; }")
        page.locator("#submit-button").click()
        page.wait_for_load_state()
        return {"profile": profile, "slot": entry["slot"], "posted": logged}
    finally:
        context.close()


def _flags(job_id: int) -> dict:
    """Confirm the harness's responses, run the flags, and read each response's stored flags and log sizes."""
    code = r"""
import django, json
django.setup()
from annotation.models import Job, Response
from annotation.services.responses import confirm
from annotation.services.quality import apply_flags
job = Job.objects.get(pk=%d)
for r in Response.objects.filter(item__job=job, status="awaiting_confirmation"):
    confirm(r, actor="provider:prolific")
apply_flags(job)
out = {}
for r in Response.objects.filter(item__job=job):
    sizes = {k: len(json.dumps(v, separators=(",", ":")).encode()) for k, v in (r.typing or {}).items()}
    out[r.slot_id] = {"flags": (r.checks or {}).get("flags", []), "sizes": sizes, "answers": r.answers}
print(json.dumps(out))
""" % job_id  # noqa: UP031
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=server_env(DB_NAME), capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(done.stderr[-3000:])
    return {int(k): v for k, v in json.loads(done.stdout.strip().splitlines()[-1]).items()}


def score(rows: list[dict]) -> dict:
    """Precision and recall per flag over the runs, and the false-flag rate on composed typing.
    A flag's positives are the runs of profiles that should raise it (`EXPECTED`)."""
    codes = sorted({c for e in EXPECTED.values() for c in e})
    per_flag = {}
    for code in codes:
        should = [r for r in rows if code in EXPECTED[r["profile"]]]
        flagged = [r for r in rows if code in r["flags"]]
        hit = [r for r in flagged if code in EXPECTED[r["profile"]]]
        per_flag[code] = {
            "precision": round(len(hit) / len(flagged), 3) if flagged else None,
            "recall": round(len(hit) / len(should), 3) if should else None,
            "flagged": len(flagged), "should": len(should),
        }
    per_profile = {}
    for profile in PROFILES:
        mine = [r for r in rows if r["profile"] == profile]
        primary = PRIMARY.get(profile)
        per_profile[profile] = {
            "runs": len(mine),
            "recall_of_own_flag": round(sum(primary in r["flags"] for r in mine) / len(mine), 3) if primary and mine else None,
            "flags_raised": dict(sorted(Counter(c for r in mine for c in r["flags"]).items())),
        }
    composed = [r for r in rows if r["profile"] == "composed"]
    false = [r for r in composed if set(r["flags"]) & (set(codes) | {"synthetic_input", "malformed_log", "revision_free"})]
    return {"per_flag": per_flag, "per_profile": per_profile,
            "composed_false_flag_rate": round(len(false) / len(composed), 3) if composed else None,
            "composed_false_flags": sorted({c for r in false for c in r["flags"]})}


def run() -> dict:
    seed = int(os.environ.get("QUORUM_BENCH_TYPING_SEED", str(random.SystemRandom().randrange(10**6))))
    rng = random.Random(seed)
    plan = [p for p in PROFILES for _ in range(RUNS)]
    rng.shuffle(plan)
    prepared = _prepare(len(plan))
    port = free_port()
    # runserver answers each request on a new thread: persistent connections would pile up (one per
    # request thread) until PostgreSQL refuses clients, so this server closes each after its request.
    env = {**server_env(DB_NAME), "DATABASE_URL": server_env(DB_NAME)["DATABASE_URL"].split("?")[0]}
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", "--noreload", "--insecure", f"127.0.0.1:{port}"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(base)
        started = time.perf_counter()
        driven = _drive(base, prepared["work"], plan, rng)
        seconds = time.perf_counter() - started
    finally:
        server.terminate()
        server.wait(timeout=30)
    stored = _flags(prepared["job"])
    rows, missing, sizes, examples, errors = [], 0, [], {}, []
    for d in driven:
        s = stored.get(d["slot"])
        if s is None:
            missing += 1
            errors.append(d.get("error", "not saved"))
            continue
        rows.append({"profile": d["profile"], "flags": s["flags"]})
        examples.setdefault(d["profile"], json.loads(d["posted"] or "{}").get("paraphrase"))
        if d["profile"] == "composed":
            # A typical 15-word rewrite: the fields of 10 to 20 words, typed with their corrections.
            sizes += [size for name, size in s["sizes"].items() if 10 <= len(str(s["answers"].get(name, "")).split()) <= 20]
    sizes.sort()
    figures = {
        "seed": seed, "runs_per_profile": RUNS, "responses_saved": len(rows), "responses_not_saved": missing, "errors": errors[:5],
        "seconds": round(seconds, 1),
        **score(rows),
        "log_bytes_per_field_composed_10_to_20_words": (
            {"n": len(sizes), "median": sizes[len(sizes) // 2], "max": sizes[-1]} if sizes else None
        ),
        "example_paraphrase_logs": examples,
        "targets": "recall >= 0.9 per non-composed behaviour; composed falsely flagged <= 2%; <= 2048 bytes a field",
    }
    save("typing", figures)
    return figures
