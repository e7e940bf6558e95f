"""Worker flags, pure: each rule raises its flag on the worker who shows it and not on the others."""
import numpy as np
import pandas as pd
import pytest

from annotation.quality.flags import FlagThresholds, compute_flags, near_duplicates, similarity


def codes(report, worker):
    return {f.code for f in report.workers.get(worker, [])}


def responses_frame(rows):
    return pd.DataFrame(rows, columns=["response", "worker", "job", "item", "seconds"])


def test_fast_responses_are_flagged_against_the_jobs_median():
    rows = [(i, "steady", 1, i, 60.0) for i in range(10)] + [(100 + i, "rusher", 1, i, 5.0) for i in range(5)]
    rows += [(200, "once", 1, 0, 4.0)] + [(201 + i, "once", 1, 20 + i, 55.0) for i in range(9)]
    report = compute_flags(responses_frame(rows))
    assert codes(report, "rusher") == {"fast"}
    assert codes(report, "steady") == set()
    assert codes(report, "once") == set()  # one fast response of ten is below the 20% share
    assert report.responses[200] == ["fast"]
    # A different job has its own norm: 5 s there is normal.
    other = responses_frame([(300 + i, "quick_job", 2, i, 5.0) for i in range(10)])
    assert codes(compute_flags(other), "quick_job") == set()


def test_unknown_times_are_never_fast():
    rows = [(i, "w", 1, i, np.nan) for i in range(5)] + [(10 + i, "v", 1, i, 30.0) for i in range(5)]
    assert compute_flags(responses_frame(rows)).flagged_workers() == []


def ratings_frame(rows):
    return pd.DataFrame(rows, columns=["response", "worker", "item", "key", "value", "order"])


def _rating_setup(patterns):
    """patterns: worker -> list of values on items 0..n-1 (one key)."""
    rows, resp = [], []
    rid = 0
    for worker, values in patterns.items():
        for item, value in enumerate(values):
            rows.append((rid, worker, item, "hard", value, item))
            resp.append((rid, worker, 1, item, 30.0))
            rid += 1
    return responses_frame(resp), ratings_frame(rows)


def test_straight_lining_and_alternating_patterns():
    rng = np.random.default_rng(1)
    honest = [int(v) for v in rng.integers(1, 6, 12)]
    patterns = {
        "flat": [3] * 12,
        "zigzag": [1, 5] * 6,
        "honest_a": honest,
        "honest_b": honest,
    }
    responses, ratings = _rating_setup(patterns)
    report = compute_flags(responses, ratings)
    assert "straight_lining" in codes(report, "flat")
    assert "alternating" in codes(report, "zigzag") and "straight_lining" not in codes(report, "zigzag")
    assert codes(report, "honest_a") & {"straight_lining", "alternating"} == set()


def test_patterns_need_enough_ratings():
    responses, ratings = _rating_setup({"flat": [3] * 5, "other": [1, 2, 3, 4, 5]})
    assert "straight_lining" not in codes(compute_flags(responses, ratings), "flat")


def test_low_agreement_with_the_other_raters_of_the_same_items():
    truth = [1, 2, 3, 4, 5] * 3
    contrarian = [6 - v if v != 3 else 1 for v in truth]
    responses, ratings = _rating_setup({"a": truth, "b": truth, "c": truth, "contrarian": contrarian})
    report = compute_flags(responses, ratings)
    assert "low_agreement" in codes(report, "contrarian")
    assert "low_agreement" not in codes(report, "a")
    assert report.measures["a"]["agreement"] == pytest.approx(2 / 3)  # agrees with b and c, never with the contrarian


def test_ordinal_keys_agree_within_one_point():
    truth = [1, 2, 3, 4, 5] * 3
    off_by_one = [min(5, v + 1) for v in truth]
    responses, ratings = _rating_setup({"a": truth, "b": truth, "near": off_by_one})
    strict = compute_flags(responses, ratings)
    lenient = compute_flags(responses, ratings, thresholds=FlagThresholds(ordinal_keys=frozenset({"hard"})))
    assert "low_agreement" in codes(strict, "near")
    assert "low_agreement" not in codes(lenient, "near")


def texts_frame(rows):
    return pd.DataFrame(rows, columns=["response", "worker", "item", "text", "pasted_chars", "typed_chars"])


def test_pasted_text_is_flagged_from_telemetry():
    responses = responses_frame([(i, "paster" if i < 5 else "typist", 1, i % 5, 30.0) for i in range(10)])
    texts = texts_frame([(i, "paster" if i < 5 else "typist", i % 5, f"text {i}", 80 if i < 5 else 0, 5 if i < 5 else 60) for i in range(10)])
    report = compute_flags(responses, texts=texts)
    assert codes(report, "paster") == {"pasted"} and codes(report, "typist") == set()


def test_near_duplicates_across_workers_on_the_same_item():
    texts = texts_frame(
        [
            (1, "a", 10, "Could you find me a cheap restaurant in the centre?", 0, 50),
            (2, "b", 10, "could you find me a cheap restaurant in the centre", 0, 50),  # near copy of a
            (3, "c", 10, "I want inexpensive food somewhere central, please.", 0, 50),
            (4, "a", 11, "Could you find me a cheap restaurant in the centre?", 0, 50),  # a repeats themself on another item
            (5, "d", 12, "Book a table for two.", 0, 50),
        ]
    )
    assert set(near_duplicates(texts, 0.9).tolist()) == {1, 2}
    assert similarity("abc", "abc") == 1.0


def test_every_worker_appears_in_the_report_even_unflagged():
    report = compute_flags(responses_frame([(1, "w", 1, 1, 10.0)]))
    assert report.workers == {"w": []}
