"""Benchmark (a) of the foundation issue: import a 10,000-dialog MultiWOZ corpus and create its job.

Measured: `import_corpus` + `create_job` (parse, validate, insert dialogs, turns, items, slots) in
a fresh interpreter on a fresh SQLite database. Baseline: a bare `sqlite3.executemany` of the same
rows into tables with the same schema (copied from the migrated database), rows prepared before
the clock starts. Target: measured within 3x of the baseline, peak memory under 600 MB.
"""
import json
import sys
import tempfile
import time
from pathlib import Path

from .common import peak_rss_mb, run_json_subprocess, save

DIALOGS = 10_000
FOLLOW_UPS = 4  # 3 + 4 = 7 user turns per dialog, ~70,000 in all, like MultiWOZ


def _django(var_dir: Path):
    import os

    os.environ["QUORUM_VAR_DIR"] = str(var_dir)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "quorum.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def measured(data_path: str, var_dir: str) -> dict:
    _django(Path(var_dir))
    from annotation.services.imports import import_corpus
    from annotation.services.jobs import create_job

    start = time.perf_counter()
    corpus = import_corpus(name="bench", source_format="multiwoz", files={"data": Path(data_path)})
    imported = time.perf_counter()
    job = create_job(corpus=corpus, name="bench rewrite job")
    end = time.perf_counter()
    from annotation.models import Turn

    return {
        "seconds": end - start,
        "import_seconds": imported - start,
        "job_seconds": end - imported,
        "turns": Turn.objects.filter(dialog__corpus=corpus).count(),
        "items": job.items.count(),
        "peak_rss_mb": peak_rss_mb(),
    }


def baseline(data_path: str, var_dir: str) -> dict:
    """The same rows, inserted by sqlite3.executemany into the same schema."""
    import sqlite3

    _django(Path(var_dir))
    from django.conf import settings

    schema_db = settings.DATABASES["default"]["NAME"]
    ddl = [r[0] for r in sqlite3.connect(schema_db).execute(
        "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name LIKE 'annotation_%'")]
    corpus_data = json.loads(Path(data_path).read_text())
    dialogs, turns, items, slots = [], [], [], []
    turn_id = item_id = 0
    for pos, (dialog_id, dialog) in enumerate(corpus_data.items(), start=1):
        dialogs.append((pos, 1, dialog_id, pos, json.dumps({"goal": dialog["goal"]})))
        for index, turn in enumerate(dialog["log"]):
            turn_id += 1
            speaker = "user" if index % 2 == 0 else "system"
            raw = {k: turn[k] for k in ("metadata", "dialog_act", "span_info")}
            slot_values = [{"slot": s[1], "value": s[2]} for s in turn["span_info"]]
            turns.append((turn_id, pos, index, speaker, turn["text"], json.dumps(slot_values), json.dumps(raw)))
            if speaker == "user":
                item_id += 1
                payload = {"utterance": turn["text"], "slot_values": [s["value"] for s in slot_values]}
                items.append((item_id, 1, turn_id, item_id, json.dumps(payload), "open"))
                slots.append((item_id, item_id, 1, 0, item_id, "open"))
    target = Path(var_dir) / "baseline.sqlite3"
    db = sqlite3.connect(target)
    for statement in ddl:
        db.execute(statement)
    db.execute("INSERT INTO annotation_corpus (id, name, source_format, meta, created_at) VALUES (1, 'bench', 'multiwoz', '{}', '2026-01-01')")
    db.execute("INSERT INTO annotation_job (id, name, corpus_id, task_type, settings, instructions, redundancy, reward, "
               "claim_timeout_minutes, state, created_at) VALUES (1, 'bench', 1, 'rewrite', '{}', '', 1, 0.5, 30, 'draft', '2026-01-01')")
    db.commit()
    start = time.perf_counter()
    db.executemany("INSERT INTO annotation_dialog (id, corpus_id, external_id, position, meta) VALUES (?,?,?,?,?)", dialogs)
    db.executemany("INSERT INTO annotation_turn (id, dialog_id, \"index\", speaker, text, slot_values, raw) VALUES (?,?,?,?,?,?,?)", turns)
    db.executemany("INSERT INTO annotation_item (id, job_id, turn_id, position, payload, state) VALUES (?,?,?,?,?,?)", items)
    db.executemany("INSERT INTO annotation_slot (id, item_id, job_id, \"index\", position, state) VALUES (?,?,?,?,?,?)", slots)
    db.commit()
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "turns": len(turns), "items": len(items), "peak_rss_mb": peak_rss_mb()}


def run() -> dict:
    from annotation.demo.corpus import generate_corpus

    with tempfile.TemporaryDirectory(prefix="quorum-bench-import-") as tmp:
        data = Path(tmp) / "data.json"
        data.write_text(json.dumps(generate_corpus(DIALOGS, seed=42, follow_ups=FOLLOW_UPS)))
        base = run_json_subprocess("perf.bench_import", ["baseline", str(data), f"{tmp}/base"], {})
        ours = run_json_subprocess("perf.bench_import", ["measured", str(data), f"{tmp}/ours"], {})
    figures = {
        "dialogs": DIALOGS,
        "user_turns": ours["items"],
        "turns": ours["turns"],
        "quorum_seconds": round(ours["seconds"], 3),
        "quorum_import_seconds": round(ours["import_seconds"], 3),
        "quorum_job_seconds": round(ours["job_seconds"], 3),
        "baseline_executemany_seconds": round(base["seconds"], 3),
        "ratio": round(ours["seconds"] / base["seconds"], 2),
        "target_ratio": 3.0,
        "quorum_peak_rss_mb": round(ours["peak_rss_mb"], 1),
        "target_peak_rss_mb": 600,
    }
    assert base["turns"] == ours["turns"] and base["items"] == ours["items"], "baseline and Quorum inserted different rows"
    save("import", figures)
    return figures


if __name__ == "__main__":
    mode, data_path, var_dir = sys.argv[1:4]
    Path(var_dir).mkdir(parents=True, exist_ok=True)
    result = measured(data_path, var_dir) if mode == "measured" else baseline(data_path, var_dir)
    print(json.dumps(result))
