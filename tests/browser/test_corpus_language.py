"""A Chinese corpus's work page in Chromium: the turn and the answer boxes are Chinese to the browser
(lang, and the CSS's Chinese font stack), the page's own words stay English, and Chinese typed into a
box so marked is saved as typed. An Arabic chat's messages, drawn by static/chat.js, are Arabic and
right to left; Quorum's own fallback among them is not. See tests/annotation/test_corpus_language.py
for the pages' markup."""
import pytest
from playwright.sync_api import expect

from annotation import chat_relay
from annotation.chat_relay import ChatRelay
from annotation.extensions import chat_relays
from annotation.models import Corpus, Response
from annotation.services.claims import claim_next_slot
from annotation.services.jobs import launch_job
from annotation.services.payload_jobs import create_payload_job
from annotation.work_tokens import make_token

from .saving import expect_saved
from .test_annotator_flow import claim_by_keyboard, log_in, make_job, wait_until_ready

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SOURCE = "我想订一家在朝阳区的便宜川菜馆，三个人。"
REWRITES = {
    "paraphrase": "请帮我在朝阳区订一家便宜的川菜馆，我们三个人。",
    "typos": "我想定一家在朝阳区的便宜川菜管，三个人。",
    "verbose": "你好，麻烦你帮我看看，我想订一家在朝阳区的便宜川菜馆，我们一共三个人，谢谢。",
    "simplified": "朝阳区便宜川菜，三个人。",
}


def font_of(page, selector: str) -> str:
    return page.evaluate("s => getComputedStyle(document.querySelector(s)).fontFamily", selector)


def test_a_chinese_corpus_s_text_and_boxes_are_chinese_to_the_browser(page, make_annotator):
    make_annotator("wen")
    job = make_job("川菜改写", [("user", SOURCE, ["朝阳区", "三个人"])])
    Corpus.objects.filter(pk=job.corpus_id).update(language="zh")
    log_in(page, "wen", "wen-pass-1")
    claim_by_keyboard(page, "川菜改写")

    assert page.evaluate("document.documentElement.lang") == "en"
    turn = page.locator("#target-turn .utterance")
    expect(turn).to_have_attribute("lang", "zh")
    expect(page.locator("#target-turn .speaker")).not_to_have_attribute("lang", "zh")  # "User · rewrite this turn"
    chinese_stack = font_of(page, "#target-turn .utterance")
    assert "Noto Sans CJK SC" in chinese_stack and "Microsoft YaHei" in chinese_stack
    assert "Noto Sans CJK JP" not in chinese_stack  # the simplified Chinese glyph forms come first
    for name in REWRITES:
        box = page.locator(f"#id_{name}")
        expect(box).to_have_attribute("lang", "zh")
        assert font_of(page, f"#id_{name}") == chinese_stack  # the box does not fall back to the page's font
    assert font_of(page, "#answers-title") != chinese_stack  # the page's own heading keeps its font

    for name, text in REWRITES.items():
        page.locator(f"#id_{name}").click()
        page.keyboard.insert_text(text)
    page.keyboard.press("Control+Enter")
    expect_saved(page)
    assert Response.objects.get().answers == REWRITES


class ArabicRelay(ChatRelay):
    """A conversation already under way: the worker's message, the system's answer, then a failed
    turn that shows Quorum's own (English) fallback."""

    def open(self, endpoint, session_key, goal):
        return {"ended": False, "turns": [
            {"role": "user", "text": "أريد مطعماً رخيصاً في وسط المدينة.", "failed": False, "offered": None},
            {"role": "system", "text": "لدي مطعمان، أيهما تفضل؟", "failed": False, "offered": None},
            {"role": "system", "text": chat_relay.FALLBACK, "failed": True, "offered": None},
        ]}


def test_an_arabic_chat_s_messages_are_arabic_and_right_to_left_and_quorum_s_fallback_is_not(page, make_annotator):
    _user, worker = make_annotator("amal")
    payload = {"goal": {"restaurant": {"info": {"pricerange": "cheap"}}}, "goal_text": ["ابحث عن مطعم رخيص في وسط المدينة."],
               "goal_id": "g1", "endpoint": "e1", "relay": "language-test"}
    job = launch_job(create_payload_job(name="محادثة", task_type="chat", payloads=[payload]))
    log_in(page, "amal", "amal-pass-1")
    with chat_relays.override("language-test", ArabicRelay()):
        page.goto(f"/work/{make_token(claim_next_slot(job=job, worker=worker))}/")
        wait_until_ready(page)
        messages = page.locator("#chat-log li .text")
        expect(messages).to_have_count(3)
    for i in (0, 1):  # the worker's and the system's
        expect(messages.nth(i)).to_have_attribute("lang", "ar")
        expect(messages.nth(i)).to_have_attribute("dir", "rtl")
        assert messages.nth(i).evaluate("e => getComputedStyle(e).direction") == "rtl"
    fallback = messages.nth(2)
    assert fallback.evaluate("e => [e.lang, e.dir, getComputedStyle(e).direction, e.closest('[lang]').lang]") == ["", "", "ltr", "en"]
    assert page.locator("#chat-log .speaker").first.evaluate("e => getComputedStyle(e).direction") == "ltr"  # "You"
    expect(page.locator("#chat-input")).to_have_attribute("dir", "rtl")
