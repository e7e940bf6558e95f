"""Benchmark of issue 14: the checks of an out-of-scope turn and of nine question paraphrases, which
run on every submission and live check, against the rewrite checks measured in the same run.

The out-of-scope check compares the turn with every knowledge question (rapidfuzz), so its cost
grows with the job's QA pairs: it is measured with none and with 5,000 (the most a job takes).
Figures are milliseconds per check and ratios to the rewrite check.
"""
import random
import sys
import time
from pathlib import Path

from .common import save

ROUNDS = 200


def _timed(call, rounds=ROUNDS) -> float:
    start = time.perf_counter()
    for _ in range(rounds):
        call()
    return (time.perf_counter() - start) / rounds * 1000


def run() -> dict:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from annotation.task_types.out_of_scope import MAX_QA_PAIRS, check_turn
    from annotation.task_types.qa_paraphrase import QaParaphraseTaskType
    from annotation.text.rewrite_checks import check_all

    rng = random.Random(14)
    words = "hotel parking breakfast pool gym wifi pets check room price taxi train station restaurant menu vegan open".split()
    questions = [" ".join(rng.choice(words) for _ in range(8)) + "?" for _ in range(MAX_QA_PAIRS)]
    source = "I need a cheap hotel in the centre for 4 people."
    rewrites = {"paraphrase": "Please find me a cheap hotel in the centre for 4 people.", "typos": "I need a chep hotel in the centre for 4 people.",
                "verbose": "Hello, I would really need a cheap hotel in the centre for 4 people please.", "simplified": "cheap hotel centre 4 people"}
    payload = {"context": [{"speaker": "user", "text": source}, {"speaker": "system", "text": "Alpha Hotel is cheap."}] * 8,
               "user_turns": [source] * 8}
    kind = QaParaphraseTaskType()
    settings = kind.clean_settings({})
    pair = {"id": "1", "question": "Is there free parking at the hotel?", "answer": "Yes."}
    paraphrases = {f"paraphrase_{n}": f"Question number {n} about parking {' '.join(rng.sample(words, 4))}?" for n in range(1, 10)}

    rewrite_ms = _timed(lambda: check_all(source, rewrites, ["cheap", "centre", "4 people"]))
    oos_none_ms = _timed(lambda: check_turn("What is the tallest mountain in Peru?", payload, [], threshold=80, min_length=2, max_length=40))
    oos_full_ms = _timed(lambda: check_turn("What is the tallest mountain in Peru?", payload, questions, threshold=80, min_length=2, max_length=40), 20)
    paraphrase_ms = _timed(lambda: kind.validate(pair, settings, paraphrases))
    figures = {
        "rewrite_check_ms": round(rewrite_ms, 3),
        "oos_check_ms_no_qa_pairs": round(oos_none_ms, 3),
        f"oos_check_ms_{MAX_QA_PAIRS}_qa_pairs": round(oos_full_ms, 3),
        "paraphrase_check_ms_9": round(paraphrase_ms, 3),
        "ratio_oos_no_qa_to_rewrite": round(oos_none_ms / rewrite_ms, 2),
        f"ratio_oos_{MAX_QA_PAIRS}_qa_to_rewrite": round(oos_full_ms / rewrite_ms, 2),
        "ratio_paraphrase_to_rewrite": round(paraphrase_ms / rewrite_ms, 2),
    }
    save("collection_checks", figures)
    return figures
