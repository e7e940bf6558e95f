"""Interactive results per system (PROTOCOLS.md section 3). Pure: no Django.

Each dialog is {system, answers (the chat response's cleaned answers), goal, database}. Success as
judged by the worker, success with grounding (the worker said success and the offered entity is a
database record satisfying the goal: `goals.grounded_success`), and their average as the final
score that ranks the systems (DSTC9 Track 2); the two ratings' means; failed turns.
"""
from collections import defaultdict

from .goals import grounded_success


def _mean(values):
    return round(sum(values) / len(values), 4) if values else None


def system_results(dialogs: list[dict]) -> list[dict]:
    by_system = defaultdict(list)
    for d in dialogs:
        by_system[d["system"]].append(d)
    rows = []
    for system, rows_of in by_system.items():
        success, grounded, understanding, appropriateness, failed = [], [], [], [], 0
        for d in rows_of:
            answers = d["answers"]
            ok = answers.get("outcome") == "success"
            offers = [t["offered"] for t in answers.get("transcript") or [] if t.get("offered")]
            success.append(1.0 if ok else 0.0)
            grounded.append(1.0 if ok and grounded_success(d["goal"], offers, d["database"]) else 0.0)
            understanding += [answers["understanding"]] if isinstance(answers.get("understanding"), int) else []
            appropriateness += [answers["appropriateness"]] if isinstance(answers.get("appropriateness"), int) else []
            failed += sum(1 for t in answers.get("transcript") or [] if t.get("failed"))
        s, g = _mean(success), _mean(grounded)
        rows.append({
            "system": system, "dialogs": len(rows_of), "success": s, "grounded_success": g,
            "final": round((s + g) / 2, 4), "understanding": _mean(understanding),
            "appropriateness": _mean(appropriateness), "failed_turns": failed,
        })
    rows.sort(key=lambda r: (-r["final"], r["system"]))
    for rank, row in enumerate(rows, start=1):
        row["rank"] = rank
    return rows
