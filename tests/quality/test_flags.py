"""Worker flags, pure: each rule raises its flag on the worker who shows it and not on the others."""
import numpy as np
import pandas as pd
import pytest
from rapidfuzz.distance import Indel

from annotation.quality.flags import FlagReport, FlagThresholds, compute_flags, near_duplicate_evidence, similarity


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


SOURCE = "Hi, I'm after a cheap place in the centre that serves Thai food."


def field_texts(rows):
    """rows: (response, worker, item, field, text), in submission order, all rewrites of SOURCE."""
    return pd.DataFrame(
        [(r, w, i, f, t, SOURCE, n, 0, 50) for n, (r, w, i, f, t) in enumerate(rows)],
        columns=["response", "worker", "item", "field", "text", "source", "order", "pasted_chars", "typed_chars"],
    )


def test_a_copied_rewrite_is_flagged_on_the_later_one_only_with_its_evidence():
    texts = field_texts(
        [
            (1, "a", 10, "paraphrase", "Could you find me a cheap Thai restaurant somewhere in the centre?"),
            (2, "b", 10, "paraphrase", "could you find me a cheap Thai restaurant somewhere in the centre"),  # copied a
            (3, "c", 10, "paraphrase", "I want inexpensive Thai food somewhere central, please."),
            (4, "a", 11, "paraphrase", "Could you find me a cheap Thai restaurant somewhere in the centre?"),  # a repeats themself
        ]
    )
    evidence = near_duplicate_evidence(texts, 0.9)
    assert set(evidence) == {2}  # the copier, not the author who was copied
    assert "response 1" in evidence[2] and "similar" in evidence[2] and "source" in evidence[2]
    assert similarity("abc", "abc") == 1.0


def test_two_honest_typo_versions_of_one_source_are_never_near_duplicates():
    # Each is a few letters from the source, so from each other too: that is the variant, not copying.
    texts = field_texts(
        [
            (1, "a", 10, "typos", "Hi, I'm aftr a cheap place in the centre that serves Thai fod."),
            (2, "b", 10, "typos", "Hi, I'm after a chaep place in teh centre that serves Thai food."),
            (3, "c", 10, "typos", "Hi, Im after a cheap plcae in the centre that serves Thia food."),
        ]
    )
    assert Indel.normalized_similarity(texts.text[0].lower(), texts.text[1].lower()) > 0.9  # close, as the issue saw
    assert near_duplicate_evidence(texts, 0.9) == {}
    # A typo version copied letter for letter is nearer the copy than the source: flagged, the later one.
    same = "Hi, I'm aftr a cheap place in the centre that serves Thai fod."
    copied = field_texts([(1, "a", 10, "typos", same), (2, "b", 10, "typos", same)])
    assert set(near_duplicate_evidence(copied, 0.9)) == {2}


def test_typo_versions_that_share_a_misspelling_are_not_near_duplicates():
    # Both misspell "place" the same way, each adds one of its own: as far apart as from the source.
    texts = field_texts(
        [
            (1, "a", 10, "typos", "Hi, I'm after a cheap plcae in the centre that serves Thai fod."),
            (2, "b", 10, "typos", "Hi, I'm after a cheap plcae in the cnetre that serves Thai food."),
        ]
    )
    assert near_duplicate_evidence(texts, 0.9) == {}


def test_short_answers_repeat_honestly_and_are_never_near_duplicates():
    texts = field_texts([(1, "a", 10, "simplified", "Cheap Thai, centre."), (2, "b", 10, "simplified", "Cheap Thai, centre.")])
    assert near_duplicate_evidence(texts, 0.9) == {}


def test_near_duplicates_compare_the_same_variant_only():
    text = "Could you find me a cheap Thai restaurant somewhere in the centre?"
    texts = field_texts([(1, "a", 10, "paraphrase", text), (2, "b", 10, "verbose", text)])
    assert near_duplicate_evidence(texts, 0.9) == {}


def test_every_response_flag_carries_its_evidence():
    # Workers 1 and 2 (ids, as the stored report has them); response 5 repeats response 0's text.
    responses = responses_frame([(i, 1 if i < 5 else 2, 1, i % 5, 2.0 if i < 2 else 60.0) for i in range(10)])
    texts = field_texts([(i, 1 if i < 5 else 2, i % 5, "paraphrase", f"rewrite number {i} of the source") for i in range(10)])
    texts.loc[texts.response == 3, ["pasted_chars", "typed_chars"]] = [90, 10]
    texts.loc[texts.response == 5, "text"] = "rewrite number 0 of the source"
    report = compute_flags(responses, texts=texts)
    for rid, codes_ in report.responses.items():
        assert set(report.evidence[rid]) == set(codes_), rid
    assert report.responses[0] == ["fast"] and "median is 60 s" in report.evidence[0]["fast"]
    assert report.responses[5] == ["near_duplicate"] and "response 0" in report.evidence[5]["near_duplicate"]
    assert report.evidence[3]["pasted"] == "90% of 100 characters entered were pasted"
    assert FlagReport.from_json(report.as_json()).evidence == report.evidence


def test_every_worker_appears_in_the_report_even_unflagged():
    report = compute_flags(responses_frame([(1, "w", 1, 1, 10.0)]))
    assert report.workers == {"w": []}
