"""A chat's language on its page: the one the job declares, else what the goal's own words show,
else none. Found walking Quorum: goals Quorum writes itself are English, so a chat with a system that
speaks Chinese was marked lang="en" (English fonts and line breaking, an English screen-reader voice)."""
import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Job
from annotation.services.claims import claim_next_slot
from annotation.work_tokens import make_token
from evaluation.errors import EvaluationInputError
from evaluation.interactive.services.chats import create_chat_job
from evaluation.interactive.services.systems import import_goals
from evaluation.models import DialogSystem, GoalSet
from tests.annotation.test_corpus_language import dir_of, lang_of

# Quorum writes these goals' sentences itself ("You are looking for a restaurant ..."): no `message`.
QUORUMS_GOALS = b'{"id": "g1", "goal": {"restaurant": {"info": {"food": "chinese", "area": "centre"}}}}\n'
# A MultiWOZ goal brings its own words.
OWN_WORDS_GOALS = b'{"id": "g1", "goal": {"restaurant": {"info": {"food": "chinese"}}, "message": ["You want a chinese restaurant."]}}\n'


@pytest.fixture
def system(db):
    return DialogSystem.objects.create(name="team-zh", url="http://127.0.0.1:9", secret="s" * 20, public_id="abc123", check_passed=True)


def _chat_page(make_annotator, goals, system, **job_fields) -> str:
    goal_set = import_goals(name=f"goals {GoalSet.objects.count()}", goals_file=goals)
    job = create_chat_job(name=f"chat {goal_set.name}", systems=[system], goal_set=goal_set, **job_fields)
    user, worker = make_annotator(f"w{job.pk}")
    client = Client()
    client.force_login(user)
    return client.get(reverse("work", kwargs={"token": make_token(claim_next_slot(job=job, worker=worker))})).content.decode()


def test_a_chat_with_a_system_that_speaks_chinese_is_marked_chinese_and_its_english_goal_english(make_annotator, system):
    page = _chat_page(make_annotator, QUORUMS_GOALS, system, language="zh")
    assert lang_of(page, "chat", "data-text-lang") == "zh" and lang_of(page, "chat-input") == "zh"
    assert lang_of(page, "chat", "data-text-dir") is None and dir_of(page, "chat-input") is None
    assert lang_of(page, "goal") == "en"  # Quorum's own sentences, not the chat's language
    assert lang_of(page, "id_outcome_reason") == "zh"  # the worker writes their reasons in the chat's language


def test_a_chat_in_hebrew_reads_right_to_left(make_annotator, system):
    page = _chat_page(make_annotator, QUORUMS_GOALS, system, language="he")
    assert (lang_of(page, "chat", "data-text-lang"), lang_of(page, "chat", "data-text-dir")) == ("he", "rtl")
    assert (lang_of(page, "chat-input"), dir_of(page, "chat-input")) == ("he", "rtl")
    assert (lang_of(page, "goal"), dir_of(page, "goal")) == ("en", None)


def test_without_a_declared_language_quorum_s_english_goal_sentences_claim_nothing(make_annotator, system):
    page = _chat_page(make_annotator, QUORUMS_GOALS, system)
    assert lang_of(page, "chat", "data-text-lang") is None and lang_of(page, "chat-input") is None
    # The goal's own words are evidence: a MultiWOZ goal's English message makes an English chat.
    page = _chat_page(make_annotator, OWN_WORDS_GOALS, system)
    assert lang_of(page, "chat", "data-text-lang") == "en" and lang_of(page, "chat-input") == "en"


def test_a_declared_language_is_checked_and_written_as_a_tag(db, system, organizer):
    goal_set = import_goals(name="goals", goals_file=QUORUMS_GOALS)
    with pytest.raises(EvaluationInputError, match='"zn" does not start with an ISO 639 language code'):
        create_chat_job(name="bad", systems=[system], goal_set=goal_set, language="zn")
    assert not Job.objects.exists()
    client = Client()
    client.force_login(organizer)
    fields = {"name": "round 1", "systems": [system.pk], "goal_set": goal_set.pk, "dialogs_per_goal": 1, "min_user_turns": 1, "reward": "0.40"}
    refused = client.post(reverse("evaluation:chat-job-create"), {**fields, "language": "zh_CN"})
    assert refused.status_code == 400 and "join its parts with hyphens" in refused.content.decode() and not Job.objects.exists()
    assert client.post(reverse("evaluation:chat-job-create"), {**fields, "language": "ZH-hans"}).status_code == 302
    assert Job.objects.get(name="round 1").settings["language"] == "zh-Hans"


def test_a_language_setting_that_is_not_text_is_refused_with_the_reason():
    from annotation import task_types

    with pytest.raises(task_types.TaskTypeSettingsError) as refused:
        task_types.get("chat").clean_settings({"language": 7})
    assert refused.value.errors == {"language": 'a BCP 47 tag such as "zh" (Chinese), or blank'}
    assert task_types.get("chat").clean_settings({})["language"] == ""  # not declared
