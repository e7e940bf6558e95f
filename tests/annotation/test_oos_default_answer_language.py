"""The out-of-scope type's default answer is English and is written into the test set after every
inserted turn; a CGoDial builder (Chinese corpus) got "I am sorry, I do not know that" in a Chinese
test set without a word. Now the builder is told, on the new-job page and the job page, where the
settings show the corpus may not be English; a note, never a refusal."""
import pytest
from django.test import Client
from django.urls import reverse

from annotation import task_types
from annotation.models import Job
from annotation.task_types.out_of_scope import DEFAULT_ANSWER
from tests.factories import make_corpus

from .test_out_of_scope import oos_form

KIND = task_types.get("oos_insert")
CHINESE_PAIRS = [{"question": "酒店有健身房吗？", "answer": "有的，在三楼。"}]
ENGLISH_PAIRS = [{"question": "Does the hotel have a gym?", "answer": "Yes, on the third floor."}]


def _notes(**settings):
    return KIND.settings_notes(KIND.clean_settings(settings))


def _answer_notes(notes):
    return [n for n in notes if DEFAULT_ANSWER in n]


def test_chinese_qa_pairs_with_the_english_default_answer_get_a_note_saying_how_to_set_it():
    [note] = _answer_notes(_notes(qa_pairs=CHINESE_PAIRS))
    assert "is English" in note and "without spaces" in note and "Default answer setting" in note


def test_an_answer_in_the_corpus_s_language_or_english_knowledge_get_no_such_note():
    assert _answer_notes(_notes(qa_pairs=CHINESE_PAIRS, default_answer="抱歉，我不知道。")) == []
    assert _answer_notes(_notes(qa_pairs=ENGLISH_PAIRS)) == []
    assert _notes(qa_pairs=ENGLISH_PAIRS) == []


def test_without_qa_pairs_the_note_says_what_to_do_if_the_corpus_is_not_english():
    [note] = _answer_notes(_notes())
    assert "If the corpus is in another language" in note
    assert _answer_notes(_notes(default_answer="抱歉，我不知道。")) == []


def test_the_setting_s_help_says_the_default_is_english():
    assert "English by default" in KIND.settings_help["default_answer"][1]


@pytest.mark.django_db
def test_the_new_job_page_and_the_job_page_carry_the_note(organizer):
    client = Client()
    client.force_login(organizer)
    page = client.post(reverse("organizer:job-new"), oos_form(make_corpus(name="hotels", dialogs=2)), follow=True).content.decode()
    assert page.count("If the corpus is in another language") == 2  # the creation's message and the job page
    assert Job.objects.get().settings["default_answer"] == DEFAULT_ANSWER  # a note, not a refusal
