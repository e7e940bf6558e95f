"""Text typed through an input method (pinyin here; kana, Hangul, dictation that composes alike),
driven through Chrome's own IME path over CDP: a key the IME takes (`Process`, key code 229) and
`Input.imeSetComposition` for each update of the composition, then `Input.insertText`, which commits
it. Each update is an `input` event of kind `insertCompositionText`; only what the composition
commits ends in the text, so only that is typed, once: in the telemetry (`static/annotate.js`) and in
the typing log (`static/typing.js`, one `m` event per composition)."""
import pytest
from playwright.sync_api import expect

from annotation.models import Response
from annotation.quality import typing as typing_flags
from annotation.selectors.quality import job_flags
from annotation.text import typing_log

from .saving import expect_saved
from .test_annotator_flow import claim_by_keyboard, log_in, make_job

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SOURCE = "你好，我想订北京饭店，三个人，明天晚上七点。"
VALUES = ["北京饭店", "三个人", "明天晚上七点"]

# (the pinyin keyed, what the IME commits); a pinyin of "" is punctuation, committed by its key
# without a composition, as pinyin IMEs do.
PARAPHRASE = [("qingbangwo", "请帮我"), ("yuding", "预订"), ("beijingfandian", "北京饭店"),
              ("mingtianwanshang", "明天晚上"), ("qidian", "七点"), ("sangeren", "三个人"), ("fangjian", "房间")]
TYPOS = [("nihao", "你好"), ("", "，"), ("woxiangding", "我想定"), ("beijingfandian", "北京饭店"), ("", "，"),
         ("sangeren", "三个人"), ("", "，"), ("mingtianwanshangqidian", "明天晚上七点"), ("", "。")]
SIMPLIFIED = [("beijingfandian", "北京饭店"), ("sangeren", "三个人"), ("mingtianwanshangqidian", "明天晚上七点")]
VERBOSE = "您好，我想在北京饭店订一个房间，一共三个人，时间是明天晚上七点，麻烦您帮我安排一下，谢谢。"
EXTRA = "另外请安排一个安静的房间，最好是高层，不要靠近电梯，谢谢您的帮助。"


def committed(segments) -> str:
    return "".join(text for _pinyin, text in segments)


def ime_key(cdp, kind):
    cdp.send("Input.dispatchKeyEvent", {"type": kind, "key": "Process", "code": "KeyA",
                                        "windowsVirtualKeyCode": 229, "nativeVirtualKeyCode": 229})


def compose(cdp, segments):
    """Type `segments` through the IME, letter by letter, each composition committed by a key."""
    for pinyin, text in segments:
        for end in range(1, len(pinyin) + 1):
            ime_key(cdp, "rawKeyDown")
            cdp.send("Input.imeSetComposition", {"text": pinyin[:end], "selectionStart": end, "selectionEnd": end})
            ime_key(cdp, "keyUp")
        ime_key(cdp, "rawKeyDown")  # the space (or punctuation key) that commits
        cdp.send("Input.insertText", {"text": text})
        ime_key(cdp, "keyUp")


def paste(page, text):
    """A real paste (Ctrl+V) of `text` at the caret."""
    page.evaluate("text => navigator.clipboard.writeText(text)", text)
    page.keyboard.press("Control+V")


def compositions(segments) -> int:
    return sum(1 for pinyin, _text in segments if pinyin)


def start(page, make_annotator, name):
    _user, worker = make_annotator(name)
    job = make_job("Hotel rewrites in Chinese", [("user", SOURCE, VALUES)])
    log_in(page, name, f"{name}-pass-1")
    claim_by_keyboard(page, "Hotel rewrites in Chinese")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    return job, worker, page.context.new_cdp_session(page)


def fill_the_rest(page, cdp, verbose_by_paste=False):
    page.locator("#id_typos").focus()
    compose(cdp, TYPOS)
    page.locator("#id_verbose").focus()
    if verbose_by_paste:
        paste(page, VERBOSE)
    else:
        compose(cdp, [("ninhao", VERBOSE)])  # one long composition: the count must not grow with it
    page.locator("#id_simplified").focus()
    compose(cdp, SIMPLIFIED)


def submit(page):
    page.keyboard.press("Control+Enter")
    expect_saved(page)


def test_twenty_characters_typed_by_pinyin_count_twenty(page, dialogs, make_annotator):
    _job, worker, cdp = start(page, make_annotator, "mei")
    expect(page.locator("#id_paraphrase")).to_be_focused()
    compose(cdp, PARAPHRASE)
    text = committed(PARAPHRASE)
    assert len(text) == 20 and sum(len(p) for p, _t in PARAPHRASE) == 68
    expect(page.locator("#id_paraphrase")).to_have_value(text)
    fill_the_rest(page, cdp)
    submit(page)

    response = Response.objects.get(worker=worker)
    assert response.answers["paraphrase"] == text
    t = response.telemetry["paraphrase"]
    assert t["typed_chars"] == 20
    assert t["pasted_chars"] == 0 and t["paste_events"] == 0
    # A composition counts one keystroke (the key that opened it), not one per pinyin letter.
    assert t["keystrokes"] == len(PARAPHRASE)
    assert response.telemetry["typos"]["typed_chars"] == len(committed(TYPOS))
    assert response.telemetry["typos"]["keystrokes"] == len(TYPOS)
    assert response.telemetry["verbose"]["typed_chars"] == len(VERBOSE)

    record = typing_log.check_record(response.typing["paraphrase"])
    events = typing_log.parse_events(record["e"])
    composed = [e for e in events if e.letter == "m"]
    assert [e.size for e in composed] == [len(t) for _p, t in PARAPHRASE]  # one event per composition
    assert not [e for e in events if e.letter in "kxs"]  # no pinyin letter, nothing unkeyed or unexplained
    f = typing_flags.features(record, text)
    assert f["keyed"] == len(text) == 20 and f["unexplained"] == 0 and f["unkeyed"] == 0
    typos = typing_log.check_record(response.typing["typos"])
    assert typing_flags.features(typos, committed(TYPOS))["keyed"] == len(committed(TYPOS))
    assert typos["c"] == {"m": compositions(TYPOS), "k": len(TYPOS) - compositions(TYPOS), "f": 1, "b": 1}
    # Nothing here is evidence against the worker: no flag of any kind on the response.
    assert job_flags(response.slot.job).evidence.get(response.pk, {}) == {}
    assert dialogs == []


def test_a_paste_after_a_composition_is_its_share_of_what_was_entered(page, dialogs, make_annotator):
    _job, worker, cdp = start(page, make_annotator, "lan")
    expect(page.locator("#id_paraphrase")).to_be_focused()
    compose(cdp, PARAPHRASE)
    paste(page, EXTRA)
    fill_the_rest(page, cdp, verbose_by_paste=True)
    submit(page)

    response = Response.objects.get(worker=worker)
    text = committed(PARAPHRASE) + EXTRA
    assert response.answers["paraphrase"] == text
    t = response.telemetry
    assert t["paraphrase"] == {"typed_chars": 20, "pasted_chars": len(EXTRA), "keystrokes": len(PARAPHRASE) + 1,
                               "paste_events": 1}
    assert t["verbose"]["pasted_chars"] == len(VERBOSE) and t["verbose"]["typed_chars"] == 0

    typed = 20 + len(committed(TYPOS)) + len(committed(SIMPLIFIED))
    pasted = len(EXTRA) + len(VERBOSE)
    evidence = job_flags(response.slot.job).evidence[response.pk]
    assert evidence["pasted"] == f"{pasted / (pasted + typed):.0%} of {pasted + typed} characters entered were pasted"
    share = len(EXTRA) / (len(EXTRA) + 20)
    assert share >= 0.5  # the paste dominates the field: 20 composed, not the 68 pinyin letters
    said = f"paraphrase: {len(EXTRA)} of {len(EXTRA) + 20} characters entered were pasted or dropped ({share:.0%}; flagged from 50%)"
    assert said in evidence["paste_dominant"]
    f = typing_flags.features(typing_log.check_record(response.typing["paraphrase"]), text)
    assert (f["keyed"], f["pasted"], f["unexplained"]) == (20, len(EXTRA), 0)
    assert dialogs == []


def test_a_composition_cancelled_or_left_by_the_focus_counts_what_stayed(page, dialogs, make_annotator):
    """Escape empties a composition (nothing typed); moving on commits what it showed (typed once)."""
    _job, worker, cdp = start(page, make_annotator, "yu")
    expect(page.locator("#id_paraphrase")).to_be_focused()
    for end in range(1, 5):
        ime_key(cdp, "rawKeyDown")
        cdp.send("Input.imeSetComposition", {"text": "bjfd"[:end], "selectionStart": end, "selectionEnd": end})
    ime_key(cdp, "rawKeyDown")
    cdp.send("Input.imeSetComposition", {"text": "", "selectionStart": 0, "selectionEnd": 0})  # Escape
    compose(cdp, PARAPHRASE[:-1])
    ime_key(cdp, "rawKeyDown")
    cdp.send("Input.imeSetComposition", {"text": "房间", "selectionStart": 2, "selectionEnd": 2})
    page.locator("#id_typos").focus()  # the composition shown is committed as the field loses focus
    compose(cdp, TYPOS)
    page.locator("#id_verbose").focus()
    compose(cdp, [("ninhao", VERBOSE)])
    page.locator("#id_simplified").focus()
    compose(cdp, SIMPLIFIED)
    submit(page)

    response = Response.objects.get(worker=worker)
    text = committed(PARAPHRASE)
    assert response.answers["paraphrase"] == text
    assert response.telemetry["paraphrase"]["typed_chars"] == 20
    record = typing_log.check_record(response.typing["paraphrase"])
    f = typing_flags.features(record, text)
    assert (f["keyed"], f["unkeyed"], f["unexplained"]) == (20, 0, 0)
    assert record["c"]["m"] == len(PARAPHRASE) + 1  # the cancelled composition is one event, of size 0
    assert dialogs == []


def test_english_typing_is_counted_as_before(page, dialogs, make_annotator):
    """No composition: a key, a character, as the telemetry and log always counted."""
    _job, worker, _cdp = start(page, make_annotator, "ed")
    expect(page.locator("#id_paraphrase")).to_be_focused()
    page.keyboard.type("hi ", delay=10)
    page.keyboard.press("Backspace")
    t = page.evaluate("() => { window.QuorumWork.record(); return JSON.parse(document.getElementById('telemetry').value); }")
    assert t["paraphrase"] == {"typed_chars": 3, "pasted_chars": 0, "keystrokes": 4, "paste_events": 0}
    log = page.evaluate("() => { window.QuorumTyping.write(); return JSON.parse(document.getElementById('typing_log').value); }")
    counts = log["paraphrase"]["c"]
    assert (counts["k"], counts["d"], "m" in counts) == (3, 1, False) and log["paraphrase"]["z"] == {"k": 3, "d": -1}
    assert Response.objects.filter(worker=worker).count() == 0
