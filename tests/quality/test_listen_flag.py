"""A spoken reading worth a listen as a flag of the flag run (pure: `quality.flags.compute_flags`
with its `readings` table): the evidence says which reading and its numbers; an honest reading
raises nothing; a job without readings carries no share of the flag."""
import pandas as pd

from annotation.quality.flags import READING_COLUMNS, RESPONSE_COLUMNS, compute_flags, flag_name

TURN = "I need a cheap restaurant in the centre of town for two people tonight"  # 14 words


def _responses(*rows):
    return pd.DataFrame([(rid, worker, 1, rid, 30.0) for rid, worker in rows], columns=RESPONSE_COLUMNS)


def _readings(*rows):
    return pd.DataFrame(rows, columns=READING_COLUMNS)


def test_an_honest_reading_is_not_flagged_and_another_sentence_is_with_its_numbers():
    responses = _responses((1, 10), (2, 20))
    readings = _readings(
        (1, 10, 0, TURN, "i would like a cheap restaurant in the centre of town for two people tonight", 3.2, 4.0, "aa"),
        (2, 20, 0, TURN, "the weather is lovely today in town", 2.9, 4.1, "bb"),  # the, in, town: 3 words; 2 in order of 14
    )
    report = compute_flags(responses, readings=readings)
    assert 1 not in report.responses  # the honest reader varies the wording: nothing to listen for
    assert report.responses[2] == ["worth_a_listen"]
    assert report.evidence[2]["worth_a_listen"] == (
        "reading 1: heard 3 of the turn's 14 words, 2.9 s of speech in a 4.1 s recording, WER 0.86"
    )
    assert report.measures[10]["worth_a_listen_share"] == 0.0 and report.measures[20]["worth_a_listen_share"] == 1.0
    (flag,) = report.workers[20]
    assert flag.code == "worth_a_listen" and flag.message == "1 of 1 responses with a reading worth a listen (100%)"
    assert flag.name == flag_name("worth_a_listen") == "a reading worth a listen"


def test_little_speech_is_judged_before_transcription_and_the_same_recording_names_the_other_reading():
    responses = _responses((1, 10), (2, 30), (3, 30))
    readings = _readings(
        (1, 10, 0, TURN, None, 0.2, 2.5, "cc"),  # a cough, not transcribed yet
        (1, 10, 1, TURN, TURN.lower(), 3.0, 3.5, "dd"),  # an honest second reading of the same response
        (2, 30, 0, TURN, TURN.lower(), 3.1, 3.6, "same"),
        (3, 30, 0, TURN, TURN.lower(), 3.1, 3.6, "same"),  # the same file sent for another item
    )
    report = compute_flags(responses, readings=readings)
    assert report.evidence[1]["worth_a_listen"] == "reading 1: 0.2 s of speech in a 2.5 s recording"
    assert report.evidence[2]["worth_a_listen"] == (
        "reading 1: heard 14 of the turn's 14 words, 3.1 s of speech in a 3.6 s recording, WER 0.00, "
        "the same recording as reading 1 of response 3"
    )
    assert report.evidence[3]["worth_a_listen"].endswith("the same recording as reading 1 of response 2")


def test_a_job_without_readings_carries_no_share_of_the_flag():
    report = compute_flags(_responses((1, 10)))
    assert "worth_a_listen_share" not in report.measures[10]
    assert report.responses == {}


def test_the_export_s_flag_table_counts_a_reading_worth_a_listen_in_that_reading_s_test_set_only():
    from annotation.exporters.flag_summary import FlagSummary

    summary = FlagSummary(["spoken_1", "spoken_2"])
    summary.add("accepted", {"flags": ["worth_a_listen"], "flag_evidence": {
        "worth_a_listen": "reading 2: 0.2 s of speech in a 2.5 s recording, the same recording as reading 1 of response 7",
    }})
    summary.add("excluded", {"flags": ["fast", "worth_a_listen"], "flag_evidence": {
        "worth_a_listen": "reading 1: heard 3 of the turn's 14 words, 2.9 s of speech in a 4.1 s recording, WER 0.86; "
                          "reading 2: 0.1 s of speech in a 2.0 s recording",
        "fast": "took 2 s; the job's median is 30 s (flagged below 25% of it, 8 s)",
    }})
    counts = summary.as_json()["per_variant"]
    assert counts["spoken_1"] == {"fast": {"excluded": 1}, "worth_a_listen": {"excluded": 1}}
    assert counts["spoken_2"] == {"fast": {"excluded": 1}, "worth_a_listen": {"accepted": 1, "excluded": 1}}
