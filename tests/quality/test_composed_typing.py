"""Text an input method composed (`m` events of the typing log: pinyin, kana, Hangul) is typed, once
per composition, and the flags' evidence stays true of it: the page's side is held in a real browser
by tests/browser/test_ime_typing.py."""
import random

import pytest

from annotation.quality.typing import TypingThresholds, features, field_flags, summary, timeline
from annotation.text import typing_log

# 52 characters of Chinese in 24 compositions of 2-3 characters, 0.6-2.5 s apart.
CHUNKS = ["我想", "订一家", "北京饭店", "的房间", "三个人", "明天", "晚上", "七点", "到", "麻烦", "帮我", "安排",
          "一下", "最好", "安静", "一点", "不要", "靠近", "电梯", "谢谢", "您的", "帮助", "再见", "好的"]
TEXT = "".join(CHUNKS)


def composed_record(seed=0, extra=()):
    rng = random.Random(seed)
    events = [("f", 900, None)] + [("m", rng.uniform(600, 2500), len(chunk)) for chunk in CHUNKS]
    return typing_log.build_record([*events, *extra])


def test_a_composed_log_is_well_formed_and_old_logs_still_are():
    record = composed_record()
    assert typing_log.check_record(record) is record
    assert len(TEXT) == 52 and record["c"]["m"] == len(CHUNKS) and record["z"]["m"] == len(TEXT)
    assert "M" in record["e"]
    old = typing_log.build_record([("f", 500, None), ("k", 200, None), ("k", 180, None), ("d", 300, None)])
    assert typing_log.check_record(old) is old
    with pytest.raises(typing_log.MalformedLog, match="'m' events"):
        typing_log.check_record({**record, "z": {"m": len(TEXT) + 1}})


def test_composed_characters_are_typed_and_nothing_flags_them():
    f = features(composed_record(), TEXT)
    assert (f["keyed"], f["composed"], f["unkeyed"], f["unexplained"], f["intervals"]) == (52, 52, 0, 0, 0)
    for seed in range(10):
        assert field_flags(features(composed_record(seed), TEXT)) == {}
    assert summary(f).startswith("52 typed (52 with an input method), 0 pasted or dropped")
    assert {cell["what"] for cell in timeline(composed_record())} <= {"typing", ""}


def test_a_paste_is_weighed_against_what_compositions_committed():
    pasted = 70
    found = field_flags(features(composed_record(extra=[("p", 900, pasted)]), TEXT + "x" * pasted))
    assert found["paste_dominant"] == f"{pasted} of {pasted + 52} characters entered were pasted or dropped (57%; flagged from 50%)"


def test_a_capped_log_still_counts_its_compositions():
    events = [("m", 800, 2)] * typing_log.MAX_EVENTS + [("m", 800, 3)]
    record = typing_log.build_record(events)
    assert record["t"] is True
    f = features(record, "字" * (2 * typing_log.MAX_EVENTS + 3))
    assert f["keyed"] == f["composed"] == 2 * typing_log.MAX_EVENTS + 3


def test_rhythm_and_revisions_are_read_from_the_keys_alone():
    """Keys typed between compositions (digits, Latin words) are timed; composed text is not, and
    its corrections happened inside the input method, so it does not make a text long and clean."""
    keys = [("k", 200, None)] * 45  # steady, no hesitation: a transcription rhythm
    rhythm = field_flags(features(composed_record(extra=keys), TEXT + "a" * 45))["transcription_rhythm"]
    assert rhythm.startswith("45 characters typed with 0 hesitations of 1 s or more in 44 intervals")
    assert rhythm.endswith("0 corrections; 52 more composed with an input method, not timed")

    long = [("m", 900, 3)] * 80  # 240 characters, composed
    assert "revision_free" not in field_flags(features(typing_log.build_record(long), "字" * 240))
    mixed = typing_log.build_record([*long, *[("k", rng, None) for rng in [150, 2400] * 110]])
    found = field_flags(features(mixed, "字" * 240 + "a" * 220), TypingThresholds())
    assert found["revision_free"] == (
        "220 characters typed key by key without one deletion, undo or cut "
        "(flagged from 200; 240 more composed with an input method, not timed)"
    )


# A phone user's answer: words from the keyboard's compositions (keys report only code 229), spaces
# by key, and one sentence dictated by voice: a composition with no key (`i`).
SPOKEN = "if that is possible please and thank you very much for your help"
WORDS = ["Could", "you", "book", "a", "cheap", "table", "in", "the", "centre"]


def phone_record():
    events = [("f", 900, None)]
    for word in WORDS:
        events += [("m", 1200, len(word)), ("k", 300, None)]
    return typing_log.build_record([*events, ("i", 4000, len(SPOKEN))])


def test_dictated_text_is_the_workers_own_and_flags_nothing():
    text = " ".join(WORDS) + " " + SPOKEN
    record = phone_record()
    assert typing_log.check_record(record) is record and record["c"]["i"] == 1
    f = features(record, text)
    assert (f["dictated"], f["unkeyed"], f["unexplained"]) == (len(SPOKEN), 0, 0)
    assert f["keyed"] == len(text)
    assert field_flags(f) == {}  # before, a dictated sentence was "text that arrived without key presses"
    assert summary(f).startswith(f"{len(text)} typed ({sum(map(len, WORDS))} with an input method, {len(SPOKEN)} dictated or handwritten), 0 pasted")
    assert features(typing_log.build_record([("i", 4000, len(SPOKEN))]), SPOKEN)["keyed"] == len(SPOKEN)


def test_an_old_log_with_dictation_recorded_as_inserted_text_reads_as_it_did():
    old = typing_log.build_record([("f", 900, None), ("x", 4000, len(SPOKEN))])
    assert "synthetic_input" in field_flags(features(old, SPOKEN))


def test_a_threshold_of_zero_characters_flags_no_honest_answer():
    """A policy stored with 0 (before the form refused it) must not flag every logged answer."""
    typed = typing_log.build_record([("f", 500, None), *[("k", 180 + 40 * (i % 7), None) for i in range(30)], ("d", 400, None)])
    zero = TypingThresholds(offscreen_min_chars=0, synthetic_min_chars=0, revision_free_min_chars=0)
    assert field_flags(features(typed, "x" * 29), zero) == {}
