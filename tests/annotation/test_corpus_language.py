"""A corpus's language: stated on import or found from its text, and carried in `lang` on the
corpus's text and the answer boxes of the work, review and voting pages.

Found walking Quorum with CGoDial: its Chinese turns were shown on pages that said lang="en" for
them, so the browser picked English fonts and line breaking, a screen reader read them with an
English voice, and the annotator's boxes did not say which language to type in.
"""
import importlib
import io
import json
import re

import pytest
from django.apps import apps
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.models import Corpus, ImportRun, Turn
from annotation.services.claims import claim_next_slot, submit_response
from annotation.services.imports import ImportFailed, import_corpus
from annotation.services.jobs import create_job, launch_job
from annotation.services.payload_jobs import create_payload_job
from annotation.services.voting import enable_voting
from annotation.text.languages import LanguageTagError, checked_tag, detected_language, is_right_to_left, language_name
from annotation.work_tokens import make_token
from tests.factories import make_corpus

USER = "我想订一家在朝阳区的便宜川菜馆，三个人。"
SYSTEM = "好的，请问您想订哪一天？"
PARAPHRASE = "请帮我在朝阳区订一家便宜的川菜馆，我们三个人。"
USER_AR = "أريد حجز طاولة في مطعم رخيص في وسط المدينة لثلاثة أشخاص."
SYSTEM_AR = "بالتأكيد، في أي يوم تريد الحجز؟"
PARAPHRASE_AR = "من فضلك احجز لي طاولة لثلاثة أشخاص في مطعم رخيص في وسط المدينة."


def chinese_jsonl(dialogs=2) -> bytes:
    lines = [
        json.dumps({"dialog_id": f"zh{d}", "turns": [{"speaker": "user", "text": USER}, {"speaker": "system", "text": SYSTEM}]}, ensure_ascii=False)
        for d in range(dialogs)
    ]
    return "\n".join(lines).encode()


def upload(content: bytes, name="corpus.jsonl"):
    file = io.BytesIO(content)
    file.name = name
    return file


def import_by_page(client, name, django_capture_on_commit_callbacks, **fields):
    with django_capture_on_commit_callbacks(execute=True):
        return client.post(
            reverse("organizer:corpus-upload"), {"name": name, "source_format": "jsonl", "data": upload(chinese_jsonl()), **fields}
        )


def lang_of(page: str, element_id: str, attribute: str = "lang") -> str | None:
    """The lang (or other `attribute`) of the element with `element_id` (None when it has none)."""
    match = re.search(rf'<[a-z0-9]+ [^>]*id="{element_id}"[^>]*>', page)
    assert match, f"no element #{element_id}"
    found = re.search(rf'(?<![\w-]){attribute}="([^"]*)"', match.group(0))
    return found.group(1) if found else None


def dir_of(page: str, element_id: str) -> str | None:
    return lang_of(page, element_id, "dir")


# --- the tag and the detection (pure) -------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "stored"),
    [("zh", "zh"), ("ZH-hans-cn", "zh-Hans-CN"), (" en-GB ", "en-GB"), ("yue", "yue"), ("zh-Hant", "zh-Hant"), ("und", "und")],
)
def test_a_well_formed_tag_is_kept_in_its_usual_case(written, stored):
    assert checked_tag(written) == stored


@pytest.mark.parametrize(
    ("written", "says"),
    [
        ("zh_CN", 'join its parts with hyphens, as in "zh-CN"'),
        ("chinese", "is not a BCP 47 tag"),
        ("zn", '("zn" is none)'),
        ("zh-", "is not a BCP 47 tag"),
        ("", "must be a BCP 47 tag"),
        ("zh-Hans-CN-" + "x" * 40, "longer than 35 characters"),
    ],
)
def test_a_tag_that_is_not_bcp_47_is_refused_with_the_reason(written, says):
    with pytest.raises(LanguageTagError, match=re.escape(says)):
        checked_tag(written)


def test_the_language_is_found_from_the_script():
    assert detected_language([USER, SYSTEM]) == "zh"
    assert detected_language(["東京駅までの行き方を教えてください。"]) == "ja"
    assert detected_language(["서울역까지 어떻게 가나요?"]) == "ko"
    assert detected_language(["I need a cheap table for 3 people."]) == "en"
    assert detected_language(["Мне нужен столик на троих."]) == "und"  # Cyrillic names no one language
    assert detected_language(["123 !?"]) == "und"
    # Chinese with some English words (names, codes) is still Chinese.
    assert detected_language(["我想订 Hilton 酒店的 deluxe 房间，两晚。"]) == "zh"
    assert detected_language([USER_AR, SYSTEM_AR]) == "ar"
    assert detected_language(["אני רוצה להזמין שולחן לשלושה אנשים."]) == "he"
    assert detected_language(["أريد غرفة في فندق Hilton لليلتين، ٣ أشخاص."]) == "ar"  # an English name and Arabic digits in it


@pytest.mark.parametrize(
    ("tag", "rtl"),
    [
        ("ar", True), ("ar-EG", True), ("he", True), ("fa-IR", True), ("ur", True), ("ps", True), ("yi", True), ("dv", True),
        ("ckb", True), ("sd", True), ("ug", True), ("arz", True),
        ("ku-Arab", True), ("pa-Arab", True), ("az-Arab-IR", True), ("jrb-Hebr", True), ("syr-Syrc", True), ("man-Nkoo", True),
        ("dv-Thaa", True),
        ("ar-Latn", False), ("sd-Deva", False), ("ug-Cyrl", False),  # the script subtag decides
        ("zh", False), ("zh-Hant", False), ("en", False), ("ja", False), ("ku", False), ("und", False), ("", False),
    ],
)
def test_a_language_written_right_to_left_is_told_by_its_tag(tag, rtl):
    assert is_right_to_left(tag) is rtl


def test_a_language_is_named_in_words_with_its_tag():
    assert language_name("zh") == "Chinese (zh)"
    assert language_name("zh-Hant") == "Chinese (zh-Hant)"
    assert language_name("ar-EG") == "Arabic (ar-EG)"
    assert language_name("yue") == "Cantonese (yue)"
    assert language_name("tlh") == "tlh"  # no name here: the tag alone
    assert language_name("") == ""


# --- import ------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_an_imported_chinese_corpus_gets_zh_and_its_work_review_and_vote_pages_carry_it(
    organizer, client, make_annotator, django_capture_on_commit_callbacks
):
    client.force_login(organizer)
    response = import_by_page(client, "cgodial", django_capture_on_commit_callbacks)
    corpus = Corpus.objects.get(name="cgodial")
    assert corpus.language == "zh"  # no language stated: found from the text
    run_page = client.get(response["Location"]).content.decode()
    assert "Language of its text: <strong>zh</strong> (found from the text's script" in run_page
    assert reverse("admin:annotation_corpus_change", args=[corpus.pk]) in run_page  # where it is corrected

    job = launch_job(create_job(corpus=corpus, name="rewrites", settings={"variants": ["paraphrase"]}))
    user, writer = make_annotator("wen")
    slot = claim_next_slot(job=job, worker=writer)
    client.force_login(user)
    page = client.get(reverse("work", kwargs={"token": make_token(slot)})).content.decode()
    assert '<html lang="en">' in page  # the page's own words stay English
    assert f'<span class="text utterance" lang="zh">{USER}</span>' in page  # the turn to rewrite
    assert lang_of(page, "id_paraphrase") == "zh"  # the box the worker writes Chinese in
    assert lang_of(page, "answers-title") is None and lang_of(page, "dialog-title") is None
    assert 'lang="en"' not in page.split("<html", 1)[1].split(">", 1)[1]  # nothing else says English for the text

    submit_response(slot_id=slot.id, worker=writer, answers={"paraphrase": PARAPHRASE})
    client.force_login(organizer)
    review = client.get(reverse("organizer:job-review", args=[job.pk])).content.decode()
    assert f'<p lang="zh">{USER}</p>' in review  # the source
    assert '<span class="diff" lang="zh">' in review  # the rewrite, as its diff against the source

    vote_job = enable_voting(job)
    voter_user, voter = make_annotator("vic")
    vote_slot = claim_next_slot(job=vote_job, worker=voter)
    client.force_login(voter_user)
    vote = client.get(reverse("work", kwargs={"token": make_token(vote_slot)})).content.decode()
    assert f'<span class="shown-text" lang="zh">{PARAPHRASE}</span>' in vote  # the answer voted on
    assert f'lang="zh">{USER}</span>' in vote  # the original turn
    assert lang_of(vote, "id_reason") == "zh"  # the voter's reason


@pytest.mark.django_db
def test_an_english_corpus_is_marked_en_on_its_work_page(make_annotator, client):
    corpus = make_corpus(dialogs=1, user_turns=1)  # English turns, made before any detection: the default
    job = launch_job(create_job(corpus=corpus, name="rewrites", settings={"variants": ["paraphrase"]}))
    user, worker = make_annotator("ann")
    client.force_login(user)
    page = client.get(reverse("work", kwargs={"token": make_token(claim_next_slot(job=job, worker=worker))})).content.decode()
    assert lang_of(page, "id_paraphrase") == "en"


@pytest.mark.django_db
def test_a_stated_language_wins_over_the_one_the_text_suggests(organizer, client, tmp_path, django_capture_on_commit_callbacks):
    client.force_login(organizer)
    import_by_page(client, "traditional", django_capture_on_commit_callbacks, language="ZH-hant")
    assert Corpus.objects.get(name="traditional").language == "zh-Hant"

    path = tmp_path / "corpus.jsonl"
    path.write_bytes(chinese_jsonl())
    call_command("import_corpus", "by-command", str(path), "--format", "jsonl", "--language", "yue", stdout=io.StringIO())
    assert Corpus.objects.get(name="by-command").language == "yue"
    call_command("import_corpus", "found", str(path), "--format", "jsonl", stdout=io.StringIO())
    assert Corpus.objects.get(name="found").language == "zh"


@pytest.mark.django_db
def test_the_api_takes_a_stated_language_and_shows_it(organizer_api, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = organizer_api.post(
            "/api/corpora/", {"name": "api", "source_format": "jsonl", "data": upload(chinese_jsonl()), "language": "zh-Hans"}, format="multipart"
        )
    assert response.status_code == 202, response.data
    [row] = [c for c in organizer_api.get("/api/corpora/").data["results"] if c["name"] == "api"]
    assert row["language"] == "zh-Hans"


@pytest.mark.django_db
def test_an_invalid_language_is_refused_everywhere_and_nothing_is_imported(
    organizer, client, organizer_api, tmp_path, django_capture_on_commit_callbacks, settings
):
    client.force_login(organizer)
    page = import_by_page(client, "bad-page", django_capture_on_commit_callbacks, language="zh_CN")
    assert page.status_code == 200
    assert 'join its parts with hyphens, as in &quot;zh-CN&quot;' in page.content.decode()

    with django_capture_on_commit_callbacks(execute=True):
        api = organizer_api.post(
            "/api/corpora/", {"name": "bad-api", "source_format": "jsonl", "data": upload(chinese_jsonl()), "language": "zn"}, format="multipart"
        )
    assert api.status_code == 400 and "language" in api.data and '"zn" is none' in str(api.data["language"])

    path = tmp_path / "corpus.jsonl"
    path.write_bytes(chinese_jsonl())
    with pytest.raises(CommandError, match="Nothing was imported. .*is not a BCP 47 tag"):
        call_command("import_corpus", "bad-command", str(path), "--format", "jsonl", "--language", "chinese")
    with pytest.raises(ImportFailed) as refused:
        import_corpus(name="bad-service", source_format="jsonl", files={"data": path}, language="zh-")
    assert refused.value.field == "language"

    assert not Corpus.objects.exists() and not ImportRun.objects.exists()
    imports = settings.QUORUM_IMPORT_DIR
    assert not imports.exists() or not any(imports.iterdir())  # no upload kept


@pytest.mark.django_db
def test_a_corpus_language_is_corrected_in_the_admin_and_a_bad_one_refused(organizer, client):
    corpus = make_corpus(name="mislabelled")
    client.force_login(organizer)
    url = reverse("admin:annotation_corpus_change", args=[corpus.pk])
    form = {"name": corpus.name, "source_format": corpus.source_format, "meta": "{}", "language": "zn"}
    refused = client.post(url, form)
    assert refused.status_code == 200 and '&quot;zn&quot; is none' in refused.content.decode()
    assert client.post(url, {**form, "language": "zh"}).status_code == 302
    corpus.refresh_from_db()
    assert corpus.language == "zh"


@pytest.mark.django_db
def test_corpora_imported_before_get_the_language_of_their_text():
    chinese = make_corpus(name="old-zh", dialogs=1, user_turns=1)
    chinese.dialogs.get().turns.update(text=USER)
    english = make_corpus(name="old-en", dialogs=1, user_turns=1)
    migration = importlib.import_module("annotation.migrations.0028_corpus_language")
    migration.detect_languages(apps, None)
    assert Corpus.objects.get(pk=chinese.pk).language == "zh"
    assert Corpus.objects.get(pk=english.pk).language == "en"


# --- every task type over a corpus, the preview, a payload job ---------------------------------------


def corpus_in(language, user, system, area, name="cgodial"):
    corpus = make_corpus(name=name, dialogs=1, user_turns=2)
    for turn in Turn.objects.filter(dialog__corpus=corpus):
        turn.text, turn.slot_values = (user, [{"slot": "area", "value": area}]) if turn.speaker == "user" else (system, [])
        turn.save(update_fields=["text", "slot_values"])
    Corpus.objects.filter(pk=corpus.pk).update(language=language)
    return corpus


def chinese_corpus(name="cgodial"):
    return corpus_in("zh", USER, SYSTEM, "朝阳区", name)


def arabic_corpus(name="arabic"):
    return corpus_in("ar", USER_AR, SYSTEM_AR, "وسط المدينة", name)


CORPUS_TYPES = [
    ("rewrite", {"variants": ["paraphrase"]}, "id_paraphrase"),
    ("hard_score", {}, None),
    ("oos_insert", {"insert_probability": 1.0}, "id_utterance"),
    ("spoken_reading", {}, None),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("task_type", "type_settings", "answer_box"), CORPUS_TYPES)
def test_every_corpus_task_type_marks_the_corpus_text_and_its_answer_box(task_type, type_settings, answer_box, make_annotator, client):
    job = launch_job(create_job(corpus=chinese_corpus(), name=task_type, task_type=task_type, settings=type_settings))
    user, worker = make_annotator("wen")
    client.force_login(user)
    page = client.get(reverse("work", kwargs={"token": make_token(claim_next_slot(job=job, worker=worker))})).content.decode()
    shown = re.findall(r'<span class="text[^"]*"( lang="[^"]*")?>([^<]*(?:<mark[^>]*>[^<]*</mark>[^<]*)*)</span>', page)
    corpus_spans = [lang for lang, text in shown if "朝阳区" in text or SYSTEM in text or "订" in text]
    assert corpus_spans and all(lang == ' lang="zh"' for lang in corpus_spans), shown
    if answer_box:
        assert lang_of(page, answer_box) == "zh"
    assert "dir=" not in page  # Chinese is written left to right, as the page's own words


def tags_with(page: str, attribute: str) -> list[str]:
    return re.findall(rf'<[a-z0-9]+ [^>]*(?<![\w-]){attribute}[^>]*>', page)


@pytest.mark.django_db
@pytest.mark.parametrize(("task_type", "type_settings", "answer_box"), CORPUS_TYPES)
def test_an_arabic_corpus_s_text_and_answer_box_are_right_to_left_and_the_page_s_own_words_are_not(
    task_type, type_settings, answer_box, make_annotator, client
):
    job = launch_job(create_job(corpus=arabic_corpus(), name=task_type, task_type=task_type, settings=type_settings))
    user, worker = make_annotator("amal")
    client.force_login(user)
    page = client.get(reverse("work", kwargs={"token": make_token(claim_next_slot(job=job, worker=worker))})).content.decode()
    marked = tags_with(page, 'lang="ar"')
    assert any('class="text' in tag for tag in marked), marked  # the corpus's turns
    # Every element in Arabic goes right to left, and nothing else does: the page's own English stays left to right.
    assert all('dir="rtl"' in tag for tag in marked), marked
    assert tags_with(page, "dir=") == [tag for tag in marked if "dir=" in tag]
    assert '<html lang="en">' in page
    if answer_box:
        assert (lang_of(page, answer_box), dir_of(page, answer_box)) == ("ar", "rtl")
    assert dir_of(page, "answers-title") is None


@pytest.mark.django_db
def test_an_arabic_corpus_s_review_queue_shows_source_and_answers_right_to_left(organizer, make_annotator, client):
    job = launch_job(create_job(corpus=arabic_corpus(), name="rewrites", settings={"variants": ["paraphrase"]}))
    _user, writer = make_annotator("amal")
    slot = claim_next_slot(job=job, worker=writer)
    submit_response(slot_id=slot.id, worker=writer, answers={"paraphrase": PARAPHRASE_AR})
    client.force_login(organizer)
    review = client.get(reverse("organizer:job-review", args=[job.pk])).content.decode()
    assert '<p lang="ar" dir="rtl">' in review  # the source
    assert '<span class="diff" lang="ar" dir="rtl">' in review  # the rewrite
    assert all('dir="rtl"' in tag for tag in tags_with(review, 'lang="ar"'))


OOS_ONE = {"insert_probability": 1.0, "max_per_dialog": 1}


@pytest.mark.django_db
def test_the_out_of_scope_default_answer_carries_the_corpus_language_when_the_builder_wrote_it(make_annotator, client):
    user, worker = make_annotator("wen")
    client.force_login(user)

    def default_answer_tag(corpus, **settings):
        job = launch_job(create_job(corpus=corpus, name=corpus.name, task_type="oos_insert", settings={**OOS_ONE, **settings}))
        page = client.get(reverse("work", kwargs={"token": make_token(claim_next_slot(job=job, worker=worker))})).content.decode()
        return re.search(r'<li class="system" id="default-answer">.*?<span class="text"([^>]*)>([^<]*)</span>', page).groups()

    assert default_answer_tag(chinese_corpus("own"), default_answer="抱歉，这个我不知道。") == (' lang="zh"', "抱歉，这个我不知道。")
    assert default_answer_tag(arabic_corpus("own-ar"), default_answer="عذراً، لا أعرف ذلك.") == (' lang="ar" dir="rtl"', "عذراً، لا أعرف ذلك.")
    # Quorum's own default is English, as the page's words: it is not marked as the corpus's language.
    assert default_answer_tag(chinese_corpus("quorum-s")) == ("", "I am sorry, I do not know that")


@pytest.mark.django_db
def test_a_chat_page_marks_the_goal_the_conversation_and_the_box_with_the_goal_s_language(make_annotator, client):
    """A chat job has no corpus: its language is its goal's text's. static/chat.js gives the
    conversation's messages #chat's data-text-lang and data-text-dir (tests/browser/test_corpus_language.py)."""
    user, worker = make_annotator("wen")
    client.force_login(user)
    goal = {"restaurant": {"info": {"food": "sichuan"}}}
    pages = {}
    for name, goal_text in (("zh", ["找一家朝阳区的川菜馆，订三个人的位子。"]), ("ar", ["ابحث عن مطعم رخيص في وسط المدينة."]), ("none", ["🍜 → 3"])):
        payload = {"goal": goal, "goal_text": goal_text, "goal_id": "g1", "endpoint": "e1"}
        job = launch_job(create_payload_job(name=f"chat {name}", task_type="chat", payloads=[payload]))
        pages[name] = client.get(reverse("work", kwargs={"token": make_token(claim_next_slot(job=job, worker=worker))})).content.decode()
    zh, ar, none = pages["zh"], pages["ar"], pages["none"]
    assert [lang_of(zh, e) for e in ("goal", "chat-input")] == ["zh", "zh"] and lang_of(zh, "chat", "data-text-lang") == "zh"
    assert "dir=" not in zh and lang_of(zh, "chat", "data-text-dir") is None
    assert [(lang_of(ar, e), dir_of(ar, e)) for e in ("goal", "chat-input")] == [("ar", "rtl")] * 2
    assert (lang_of(ar, "chat", "data-text-lang"), lang_of(ar, "chat", "data-text-dir")) == ("ar", "rtl")
    # No language told by the goal: nothing marked, the messages read as the page's own.
    assert [lang_of(none, e) for e in ("goal", "chat-input", "chat")] == [None] * 3 and lang_of(none, "chat", "data-text-lang") is None


@pytest.mark.django_db
def test_the_job_page_names_its_corpus_s_language_in_words(organizer, client):
    job = create_job(corpus=chinese_corpus(), name="rewrites", settings={"variants": ["paraphrase"]})
    client.force_login(organizer)
    page = client.get(reverse("organizer:job", args=[job.pk])).content.decode()
    assert "<tr><th>Items from</th><td>corpus cgodial</td></tr>" in page
    assert '<tr><th>Language</th><td id="job-corpus-language">Chinese (zh) ' in page


@pytest.mark.django_db
def test_an_organizer_s_preview_marks_the_text_as_the_worker_s_page_does(organizer, client):
    job = create_job(corpus=chinese_corpus(), name="rewrites", settings={"variants": ["paraphrase"]})
    client.force_login(organizer)
    page = client.get(reverse("organizer:job-preview", args=[job.pk])).content.decode()
    assert lang_of(page, "id_paraphrase") == "zh" and 'class="text utterance" lang="zh"' in page


@pytest.mark.django_db
def test_a_payload_job_takes_the_language_of_its_item_s_text(make_annotator, client):
    user, worker = make_annotator("wen")
    client.force_login(user)
    for question, answer, language in (("酒店有健身房吗？", "有的，在三楼。", "zh"), ("Does the hotel have a gym?", "Yes, on the third floor.", "en")):
        job = launch_job(create_payload_job(name=language, task_type="qa_paraphrase", payloads=[{"id": "q", "question": question, "answer": answer}]))
        page = client.get(reverse("work", kwargs={"token": make_token(claim_next_slot(job=job, worker=worker))})).content.decode()
        assert lang_of(page, "source-question") == language and lang_of(page, "source-answer") == language
        assert lang_of(page, "id_paraphrase_1") == language
