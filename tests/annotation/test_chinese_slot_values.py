"""Slot values in Chinese (CGoDial) rewrites, written without spaces between words.

Found walking Quorum with a Chinese restaurant and hotel corpus: the rewrite check took a value as
a plain substring, so a rewrite that turned "三个人" (three people) into "十三个人" (thirteen), or
"4位" into "14位", was accepted as keeping it, live on the page and on submit.
"""
import pytest

from annotation.text import text_units
from annotation.text.rewrite_checks import check_rewrite

SOURCE = "你好，我想订北京饭店，三个人，明天晚上七点。"
VALUES = ["北京饭店", "三个人", "明天晚上七点"]


def _missing(rewrite: str, values=VALUES, source=SOURCE) -> list[str]:
    return [p.message for p in check_rewrite("paraphrase", source, rewrite, values) if p.code == "slot_value_missing"]


@pytest.mark.parametrize("rewrite", [
    "北京饭店，十三个人，明天晚上七点，帮我订一下。",  # thirteen people
    "北京饭店，二十三个人，明天晚上七点",
    "订北京饭店，十三个人和三十个人，明天晚上七点",
])
def test_a_number_changed_around_a_chinese_value_is_not_keeping_it(rewrite):
    assert _missing(rewrite) == ['Paraphrase: keep the slot value "三个人" exactly as written.']


def test_an_hour_changed_around_a_chinese_time_is_not_keeping_it():
    source, values = "订今晚七点的位子。", ["七点"]
    assert _missing("订今晚十七点的位子吧", values, source) == ['Paraphrase: keep the slot value "七点" exactly as written.']


def test_digits_glued_to_a_value_count_in_any_width():
    source, values = "帮我订全聚德烤鸭店，4位，今晚8点。", ["全聚德烤鸭店", "4位", "今晚8点"]
    assert _missing("请预订全聚德烤鸭店，１４位，今晚8点。", values, source) == [
        'Paraphrase: keep the slot value "4位" exactly as written.'
    ]
    assert _missing("请预订全聚德烤鸭店，４位，今晚8点。", values, source) == []  # full-width 4 is 4
    assert text_units.contains_value("订两个人吧", "两个人", True)
    assert not text_units.contains_value("订二十两个人", "两个人", True)


def test_chinese_values_inside_running_text_still_pass():
    assert _missing("我要在北京饭店订位，三个人，时间是明天晚上七点。") == []
    assert _missing("北京饭店三个人明天晚上七点") == []
    assert text_units.contains_value("第一个人来", "一个人", True)  # 第 is no numeral


def test_spaced_scripts_keep_whole_word_values():
    assert not text_units.contains_value("a table for 13 people", "3 people", False)
    assert not text_units.contains_value("the least expensive", "east", False)
    assert text_units.contains_value("a table for 3 people", "3 people", False)
