"""The automatic rewrite checks (pure module, no database)."""
import pytest

from annotation.demo.annotators import reason_code
from annotation.text.rewrite_checks import check_all, check_rewrite
from annotation.text.text_units import contains_value, is_unspaced, length

SOURCE = "Hi, I'm after a cheap place in the centre that serves Thai food."
SLOTS = ["cheap", "centre", "Thai"]


def codes(problems):
    return sorted(p.code for p in problems)


def test_good_rewrites_of_every_variant_pass():
    answers = {
        "paraphrase": "Hello, I want a cheap restaurant in the centre that has Thai food.",
        "typos": "Hi, Im after a cheap plce in the centre that serves Thai fod.",
        "verbose": "Hello there, I am currently looking for a cheap place somewhere in the centre of town that happens to serve Thai food.",
        "simplified": "Cheap Thai food in the centre?",
    }
    assert check_all(SOURCE, answers, SLOTS) == []


def test_missing_slot_value_is_named_in_the_message():
    problems = check_rewrite("paraphrase", SOURCE, "Hello, I want an inexpensive Thai place in the centre.", SLOTS)
    assert codes(problems) == ["slot_value_missing"]
    assert '"cheap"' in problems[0].message


def test_slot_value_must_be_a_whole_word_in_spaced_scripts():
    assert not contains_value("a table for 13 people", "3", unspaced=False)
    assert contains_value("a table for 3 people", "3", unspaced=False)
    assert contains_value("Christ's College, please", "christ's college", unspaced=False)


def test_rewrite_identical_to_source_is_refused_ignoring_case_and_spacing():
    problems = check_rewrite("paraphrase", SOURCE, "  hi, i'm after a CHEAP place in the centre that serves thai food. ", SLOTS)
    assert codes(problems) == ["unchanged"]


def test_verbose_must_be_longer_and_simplified_shorter():
    same_length = "Hello, I'm looking for a cheap place in the centre with Thai food."
    assert "not_longer" in codes(check_rewrite("verbose", SOURCE, same_length, SLOTS))
    assert "not_shorter" in codes(check_rewrite("simplified", SOURCE, SOURCE + " Thanks a lot for that.", SLOTS))


def test_typos_must_stay_close_to_the_source():
    rewritten = "Good evening, can you find me something cheap and Thai near the centre?"
    problems = check_rewrite("typos", SOURCE, rewritten, SLOTS)
    assert "too_different" in codes(problems)
    assert check_rewrite("typos", SOURCE, "Hi, I'm aftr a cheap place in teh centre that serves Thai food.", SLOTS) == []


def test_empty_field_is_required():
    assert codes(check_rewrite("simplified", SOURCE, "   ", SLOTS)) == ["required"]


@pytest.mark.parametrize(
    "text,unspaced,n",
    [("我想订一家便宜的餐厅", True, 10), ("I want a cheap restaurant", False, 5), ("東京駅の近くのホテル", True, 10)],
)
def test_lengths_count_characters_in_unspaced_scripts_and_words_elsewhere(text, unspaced, n):
    assert is_unspaced(text) is unspaced
    assert length(text, unspaced) == n


def test_chinese_rewrites_are_checked_by_characters_and_substrings():
    source = "我想在市中心找一家便宜的餐厅"
    slots = ["市中心", "便宜"]
    assert check_rewrite("simplified", source, "市中心便宜餐厅", slots) == []
    assert codes(check_rewrite("verbose", source, "我想在市中心找便宜餐厅", slots)) == ["not_longer"]
    assert codes(check_rewrite("paraphrase", source, "我想找一家便宜的饭店", slots)) == ["slot_value_missing"]
    assert check_rewrite("verbose", source, "你好，我现在想要在市中心附近找一家价格比较便宜的餐厅吃饭", slots) == []


@pytest.mark.parametrize(
    "source,rewrite",
    [
        (SOURCE, "Hi I'm after a cheap place in the centre that serves Thai food"),  # punctuation only
        (SOURCE, "hi,i'm after a cheap place in thecentre that serves thai food!!"),  # spaces and case
        ("我想在市中心找一家便宜的餐厅。", "我想在市中心，找一家便宜的餐厅"),  # Chinese punctuation
        ("ฉันอยากได้ร้านอาหารราคาถูก", "ฉันอยากได้ ร้านอาหาร ราคาถูก!"),  # Thai, spaces added
    ],
)
def test_a_rewrite_that_only_changes_case_spaces_or_punctuation_is_the_source(source, rewrite):
    assert "unchanged" in codes(check_rewrite("paraphrase", source, rewrite, []))


def test_the_source_words_always_pass_the_slot_check_whatever_the_value_looks_like():
    # Values as the MultiWOZ importer stores them: whole words of the source, as written there.
    source = "I want a moderately priced place for one person at 9:15 , near Christ's College ."
    values = ["moderately", "one", "9:15", "Christ's College"]
    assert [p.code for p in check_rewrite("paraphrase", source, source, values)] == ["unchanged"]
    assert check_rewrite("typos", source, source.replace("want", "wnat"), values) == []
    # A value is matched as stored: "09:15" and "1" are not in the source, "moderate" is not a word of it.
    assert not contains_value(source, "09:15", unspaced=False)
    assert not contains_value(source, "moderate", unspaced=False)
    assert contains_value("Cheap Thai food, one person", "one", unspaced=False)


def test_a_rewrite_changed_only_in_spacing_or_punctuation_says_so_not_that_it_is_the_same():
    # "I 'm" -> "I'm": the worker did edit, so "the same as the original" would be untrue.
    message = check_rewrite("paraphrase", "I 'm after a cheap hotel .", "I'm after a cheap hotel.", ["cheap"])[0].message
    assert message == "Paraphrase: the rewrite differs from the original only in case, spacing or punctuation; change the wording."
    same = check_rewrite("paraphrase", "I 'm after a cheap hotel .", " I 'm after a cheap hotel . ", ["cheap"])[0].message
    assert same == "Paraphrase: the rewrite is the same as the original; change its wording."


def test_the_demo_names_both_refusals_of_an_unchanged_rewrite():
    assert reason_code(check_rewrite("typos", "I 'm here .", "I'm here.", [])[0].message) == (
        "a rewrite changed only case, spacing or punctuation"
    )
    assert reason_code(check_rewrite("typos", "I 'm here .", "I 'm here .", [])[0].message) == "a rewrite copied the original"
