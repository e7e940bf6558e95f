"""Help texts say what the checks count: the rewrite's verbose/simplified checks and the out-of-scope
length bounds count characters (punctuation and spaces aside) where the text is mostly in a script
written without spaces, words elsewhere (`text_units.length`); they said "words" only. The typos help
names what a typo is in Chinese (错别字, wrong characters of the same sound)."""
from annotation import task_types
from annotation.text import text_units
from annotation.text.rewrite_checks import check_rewrite

REWRITE = task_types.get("rewrite")
OOS = task_types.get("oos_insert")


def _help(variant):
    return next(f["help"] for f in REWRITE.answer_fields({}) if f["name"] == variant)


def test_verbose_and_simplified_say_words_or_characters_and_what_is_not_counted():
    for variant in ("verbose", "simplified"):
        words = _help(variant)
        assert "words" in words and "characters" in words and "without spaces" in words and "punctuation" in words
    assert "more than the original" in _help("verbose") and "fewer than the original" in _help("simplified")


def test_the_counting_the_help_describes_is_the_check_s():
    source = "我想订北京饭店。"  # 7 characters, punctuation not counted
    assert text_units.length(source, True) == 7
    longer_by_punctuation = "我想订北京饭店！！！"
    assert [p.code for p in check_rewrite("verbose", source, longer_by_punctuation, ["北京饭店"])] != []
    assert check_rewrite("verbose", source, "你好，我想订一下北京饭店。", ["北京饭店"]) == []


def test_typos_help_names_wrong_characters_of_the_same_sound():
    assert "错别字" in _help("typos") and "misspellings" in _help("typos")


def test_out_of_scope_lengths_say_characters_in_unspaced_scripts():
    for setting in ("min_length", "max_length"):
        help_text = OOS.settings_help[setting][1]
        assert "words" in help_text and "characters" in help_text and "punctuation" in help_text
    assert "2 is two characters" in OOS.settings_help["min_length"][1]
