"""Word error rate against hand-counted edits, and the documented normalisation."""
import pytest

from annotation.speech.wer import corpus_wer, normalize_words, number_words, wer, word_errors


def test_normalisation_lowercases_strips_punctuation_and_spells_numbers():
    assert normalize_words("Book a table for 2, at 12:30 -- on the 3rd floor!") == (
        "book a table for two at twelve thirty on the third floor".split()
    )
    assert normalize_words("I'd like 'The Gardenia' please.") == ["i'd", "like", "the", "gardenia", "please"]


@pytest.mark.parametrize(
    ("n", "words"),
    [(0, "zero"), (15, "fifteen"), (40, "forty"), (101, "one hundred one"), (2024, "two thousand twenty four"),
     (1_000_000, "one million")],
)
def test_number_words(n, words):
    assert number_words(n) == words


def test_utterance_wer_counts_substitutions_deletions_insertions():
    # reference 6 words; "cheap"->"cheep" (S), "the" deleted (D), "now" inserted (I): 3 edits
    errors = word_errors("I want a cheap hotel the north", "I want a cheep hotel north now")
    assert (errors.edits, errors.reference_words) == (3, 7)
    assert wer("a b c d", "a b c d") == 0.0
    assert wer("Hello, world.", "hello world") == 0.0  # punctuation and case are not errors


def test_corpus_wer_is_total_edits_over_total_words_not_a_mean():
    pairs = [("a b c d e f g h i j", "a b c d e f g h i x"), ("k l", "x y")]
    # edits 1 + 2 over 12 words = 0.25; the mean of rates would be (0.1 + 1.0) / 2 = 0.55
    assert corpus_wer(pairs) == pytest.approx(0.25)


def test_empty_reference():
    assert wer("", "") == 0.0
    assert wer("", "noise") == 1.0
