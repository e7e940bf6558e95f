"""Flags as a reviewer sees them: on a job's review list and on a worker page, from stored responses."""

import pytest

from annotation.models import Response
from annotation.selectors.quality import review_list, worker_quality
from annotation.services.claims import claim_next_slot, clean_telemetry, submit_response
from annotation.services.quality import apply_flags, set_quality
from tests.factories import good_answers, make_corpus, make_live_job

pytestmark = pytest.mark.django_db


def _do(job, worker, seconds, telemetry=None):
    slot = claim_next_slot(job=job, worker=worker)
    return submit_response(slot_id=slot.id, worker=worker, answers=good_answers(slot.item), active_seconds=seconds, telemetry=telemetry)


@pytest.fixture
def flagged_job(make_annotator):
    job = make_live_job(make_corpus(dialogs=5, user_turns=2), redundancy=2)  # 10 items x 2
    steady = make_annotator("steady")[1]
    rusher = make_annotator("rusher")[1]
    for _ in range(10):
        _do(job, steady, 90)
        _do(job, rusher, 4, telemetry={"paraphrase": {"pasted_chars": 60, "typed_chars": 0}})
    return job, steady, rusher


def test_the_review_list_shows_fast_pasted_and_duplicate_evidence(flagged_job):
    job, steady, rusher = flagged_job
    apply_flags(job)  # the sweep stores the flags; the review list only reads them
    rows = review_list(job)
    # good_answers() writes the same rewrites for an item whoever the worker: the later copy of each
    # (the rusher's, submitted after the steady worker's) is a near-duplicate; the steady worker,
    # who was copied, carries no flag and is not on the flagged list.
    assert rows and {r.worker_id for r in rows} == {rusher.pk}
    assert all({"fast", "pasted", "near_duplicate"} <= set(r.response_flags) for r in rows)
    assert {"fast", "pasted"} <= set(rows[0].worker_flags)
    assert all(not r.response_flags for r in review_list(job, flagged_only=False) if r.worker_id == steady.pk)
    # Each stored flag says why.
    checks = Response.objects.get(pk=rows[0].response_id).checks
    assert set(checks["flag_evidence"]) == set(checks["flags"])
    assert "submitted earlier" in checks["flag_evidence"]["near_duplicate"]
    assert "pasted" in checks["flag_evidence"]["pasted"]


def test_flags_do_not_reject_unless_the_job_says_so(flagged_job):
    job, _steady, rusher = flagged_job
    apply_flags(job)
    assert not Response.objects.filter(item__job=job).exclude(status=Response.Status.ACCEPTED).exists()
    assert "fast" in Response.objects.filter(worker=rusher).first().checks["flags"]
    set_quality(job, flags_reject=True)
    result = apply_flags(job)
    assert result["soft_rejected"] == 10  # every rusher response is flagged; the steady worker's none
    assert apply_flags(job)["recorded"] == 0  # idempotent


def test_the_worker_page_lists_flags_and_measures_per_job(flagged_job):
    job, steady, rusher = flagged_job
    apply_flags(job)
    [entry] = worker_quality(rusher)
    assert entry.job == job and entry.responses == 10
    assert {"fast", "pasted"} <= {f.code for f in entry.flags}
    assert entry.measures["fast_share"] == 1.0
    # The page says each measure in words, counts whole and shares in percent: no "fast_share 1.00".
    words = dict(entry.measures_in_words)
    assert words["responses far faster than the job's norm"] == "100%"
    assert not any("_" in name for name in words), words


def test_measures_read_as_words_and_numbers():
    from annotation.quality.flags import described_measures

    said = described_measures({"ratings": 284.0, "mode_share": 1.0, "fast_share": 0.25, "agreement": None,
                               "reliability_spammer_score": -0.001, "typing_median_iki_ms": 183.4, "something_new": 0.5})
    assert said[0] == ("responses far faster than the job's norm", "25%")  # the response flags lead
    assert ("ratings", "284") in said and ("ratings of their most common value", "100%") in said
    assert ("median time between keys", "183 ms") in said and ("something new", "0.50") in said
    assert dict(said)["spammer score (reliability model; 0 = answers unrelated to the item)"] == "0.00"
    assert not any("agreement" in words for words, _ in said)  # not measured: not shown


def test_telemetry_is_cleaned_not_refused():
    assert clean_telemetry({"paraphrase": {"pasted_chars": 12, "keystrokes": 3.0, "evil": "x"}, "x": "y"}) == {
        "paraphrase": {"pasted_chars": 12, "keystrokes": 3}
    }
    assert clean_telemetry("garbage") == {}
    assert clean_telemetry({"f": {"pasted_chars": -5, "typed_chars": True}}) == {}


def test_every_response_flag_reads_as_a_count_of_responses():
    """The worker's evidence says "2 of 2 <words>": each flag's words must read after a count."""
    from annotation.quality import typing as typing_flags
    from annotation.quality.flags import RESPONSE_FLAG_WORDS

    assert set(typing_flags.CODES) <= set(RESPONSE_FLAG_WORDS)
    for code, words in RESPONSE_FLAG_WORDS.items():
        first, second = words.split()[:2]
        assert first in ("responses", "rewrites"), (code, words)
        assert not (second == "with" and words.split()[2] in ("typed", "text")), f"{code}: 'N of M {words}' does not read"
    assert RESPONSE_FLAG_WORDS["implausible_speed"] == "responses typed faster than people type"
