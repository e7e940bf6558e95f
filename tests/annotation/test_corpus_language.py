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
from annotation.text.languages import LanguageTagError, checked_tag, detected_language
from annotation.work_tokens import make_token
from tests.factories import make_corpus

USER = "我想订一家在朝阳区的便宜川菜馆，三个人。"
SYSTEM = "好的，请问您想订哪一天？"
PARAPHRASE = "请帮我在朝阳区订一家便宜的川菜馆，我们三个人。"


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


def lang_of(page: str, element_id: str) -> str | None:
    """The lang attribute of the element with `element_id` (None when it has none)."""
    match = re.search(rf'<[a-z0-9]+ [^>]*id="{element_id}"[^>]*>', page)
    assert match, f"no element #{element_id}"
    found = re.search(r'\blang="([^"]*)"', match.group(0))
    return found.group(1) if found else None


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


def chinese_corpus(name="cgodial"):
    corpus = make_corpus(name=name, dialogs=1, user_turns=2)
    for turn in Turn.objects.filter(dialog__corpus=corpus):
        turn.text, turn.slot_values = (USER, [{"slot": "area", "value": "朝阳区"}]) if turn.speaker == "user" else (SYSTEM, [])
        turn.save(update_fields=["text", "slot_values"])
    Corpus.objects.filter(pk=corpus.pk).update(language="zh")
    return corpus


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
