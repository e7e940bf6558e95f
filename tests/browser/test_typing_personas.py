"""Honest writers and cheaters on a rewrite job, in a real Chromium with a virtual clock (the page's
clock is Playwright's, advanced between keys, so the rhythm is what each persona means without the
test waiting on it): who the typing-process flags (annotation/quality/typing.py) accuse. An honest
writer, on a keyboard, a phone or an input method, is never flagged; each cheater is."""
import random
import re

import pytest
from playwright.sync_api import expect

from annotation.models import Response
from annotation.quality import typing as typing_flags
from annotation.selectors.quality import job_flags
from tests.factories import make_corpus, make_live_job

from . import test_ime_typing as ime
from .conftest import record_policy_violations
from .saving import expect_saved
from .test_annotator_flow import make_job, wait_until_ready

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FIELDS = ["paraphrase", "typos", "verbose", "simplified"]
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True, "device_scale_factor": 3}


def answers_for(area):
    return {
        "paraphrase": f"Could you book a cheap table in the {area} for two of us?",
        "typos": f"I ned a cheap tabel for 2 peple in the {area} plese.",
        "verbose": f"Hello, I am hoping to find a cheap table for 2 people somewhere in the {area}, if that is possible please.",
        "simplified": f"cheap table, {area}, 2 people",
    }


class Writer:
    """One worker's tab: a virtual clock, CDP for the key paths Playwright's keyboard does not take."""

    def __init__(self, browser, base_url, name, phone=False, job="Table rewrites"):
        self.context = browser.new_context(base_url=base_url, **(PHONE if phone else {}))
        self.refused = record_policy_violations(self.context)
        self.context.clock.install()
        self.page = self.context.new_page()
        self.cdp = self.context.new_cdp_session(self.page)
        self.rng = random.Random(name)
        self.phone = phone
        page = self.page
        page.goto("/accounts/login/?next=/")
        page.locator("#id_username").fill(name)
        page.locator("#id_password").fill(f"{name}-pass-1")
        page.locator("#id_password").press("Enter")
        expect(page.get_by_role("heading", name=f"Hello, {name}")).to_be_visible()
        page.get_by_role("button", name=f"Next item: {job}", exact=True).click()
        wait_until_ready(page)
        area = re.search(r"in the (\w+) please", page.locator("#target-turn").inner_text())
        self.answers = answers_for(area.group(1)) if area else {}

    def wait(self, ms):
        self.page.clock.run_for(int(ms))

    def focus(self, field):
        self.wait(self.rng.uniform(400, 1200))
        locator = self.page.locator(f"#id_{field}")
        locator.tap() if self.phone else locator.click()
        # A tap moves focus only once the page has handled the touch: on a loaded machine the next
        # keys went to the box before (the suite saw a phone writer's simplified text in Verbose).
        expect(locator).to_be_focused()

    def key(self, ch, dt):
        self.wait(dt)
        self.page.keyboard.type(ch) if ch != "\b" else self.page.keyboard.press("Backspace")

    def away(self, ms):
        """The worker goes to another window and comes back."""
        self.page.evaluate("window.dispatchEvent(new Event('blur'))")
        self.wait(ms)
        self.page.evaluate("window.dispatchEvent(new Event('focus'))")

    # -- an input method's or a phone keyboard's keys (key code 229), as test_ime_typing does
    def ime_key(self, kind):
        self.cdp.send("Input.dispatchKeyEvent", {"type": kind, "key": "Unidentified", "code": "",
                                                 "windowsVirtualKeyCode": 229, "nativeVirtualKeyCode": 229})

    def compose(self, shown, commit, dt, keyed=True):
        """One composition: each of `shown`'s prefixes shown in turn (a key each when keyed), then `commit`."""
        for end in range(1, len(shown) + 1):
            self.wait(dt())
            if keyed:
                self.ime_key("rawKeyDown")
            self.cdp.send("Input.imeSetComposition", {"text": shown[:end], "selectionStart": end, "selectionEnd": end})
            if keyed:
                self.ime_key("keyUp")
        self.wait(dt())
        if keyed:
            self.ime_key("rawKeyDown")
        self.cdp.send("Input.insertText", {"text": commit})
        if keyed:
            self.ime_key("keyUp")

    def submit(self):
        self.wait(1500)
        self.page.locator("#submit-button").click()
        expect_saved(self.page)
        assert self.refused == []
        self.context.close()


def human_gap(rng, base=170, spread=70, think=0.12):
    """A person's interval before a key: a little over base, and now and then a second or more to think."""
    if rng.random() < think:
        return rng.uniform(1100, 3500)
    return max(60, rng.gauss(base, spread))


def type_like_a_person(w, text, base=170, spread=70, think=0.12, typo_rate=0.0):
    for i, ch in enumerate(text):
        gap = human_gap(w.rng, base, spread, think if (i == 0 or text[i - 1] == " ") else think / 6)
        if typo_rate and ch.isalpha() and w.rng.random() < typo_rate:
            w.key(chr(ord("a") + w.rng.randrange(26)), gap)
            w.key("\b", w.rng.uniform(250, 700))
            gap = w.rng.uniform(120, 300)
        w.key(ch, gap)


# -- honest people ---------------------------------------------------------------------------
def steady_typist(w):
    for field in FIELDS:
        w.focus(field)
        type_like_a_person(w, w.answers[field], base=150, spread=45, think=0.1, typo_rate=0.02)


def slow_thinker(w):
    for field in FIELDS:
        w.focus(field)
        w.wait(w.rng.uniform(3000, 9000))
        type_like_a_person(w, w.answers[field], base=320, spread=120, think=0.3, typo_rate=0.03)
        if field == "verbose":
            w.away(15000)  # looks something up in another window, comes back, goes on
            type_like_a_person(w, " Thanks!", base=320, spread=120)


def heavy_corrector(w):
    for field in FIELDS:
        w.focus(field)
        type_like_a_person(w, w.answers[field], base=190, spread=80, think=0.15, typo_rate=0.12)


def fluent_retyper(w):
    """Composes the rewrites with a pause here and there, but retypes the source with its typos at
    an even rhythm, reading it off the page: that variant is transcription by design."""
    for field in FIELDS:
        w.focus(field)
        if field == "typos":
            for ch in w.answers[field]:
                w.key(ch, w.rng.gauss(165, 25))
        else:
            type_like_a_person(w, w.answers[field], base=150, spread=45, think=0.1)


def phone_keyboard(w):
    """Gboard on Android Chrome: every word a composition behind keys that say only 229, a space a key,
    autocorrect fixing a word as it commits, one field dictated by voice (compositions with no key)."""
    def gap():
        return w.rng.uniform(150, 450)
    for field in FIELDS:
        w.focus(field)
        words = w.answers[field].split(" ")
        if field == "verbose":
            w.wait(1500)  # taps the microphone
            for phrase in (" ".join(words[:8]), " ".join(words[8:])):
                for cut in range(1, 4):
                    w.wait(700)
                    w.cdp.send("Input.imeSetComposition", {"text": phrase[: len(phrase) * cut // 3], "selectionStart": 0, "selectionEnd": 0})
                w.cdp.send("Input.insertText", {"text": phrase + ("" if phrase.endswith(".") else " ")})
            continue
        for i, word in enumerate(words):
            typed = word
            if len(word) > 4 and w.rng.random() < 0.3:
                typed = word[:2] + word[3] + word[2] + word[4:]  # a slip autocorrect puts right
            w.compose(typed, word, gap)
            if i < len(words) - 1:
                w.wait(gap())
                w.ime_key("rawKeyDown")
                w.cdp.send("Input.insertText", {"text": " "})
                w.ime_key("keyUp")


def chinese_ime(w):
    """A Chinese writer: every field in pinyin through the IME (test_ime_typing's rewrites)."""
    def gap():
        return w.rng.uniform(120, 400)
    for field, segments in zip(FIELDS, (ime.PARAPHRASE, ime.TYPOS, [("ninhao", ime.VERBOSE)], ime.SIMPLIFIED), strict=True):
        w.focus(field)
        for pinyin, text in segments:
            if pinyin:
                w.compose(pinyin, text, gap)
            else:
                w.wait(gap())
                w.ime_key("rawKeyDown")
                w.cdp.send("Input.insertText", {"text": text})
                w.ime_key("keyUp")


# -- cheaters ----------------------------------------------------------------------------------
def llm_paster(w):
    w.page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    for field in FIELDS:
        w.away(w.rng.uniform(8000, 20000))  # asks the chatbot in another window
        w.focus(field)
        w.page.evaluate("text => navigator.clipboard.writeText(text)", w.answers[field])
        w.page.keyboard.press("Control+V")


def llm_dropper(w):
    for field in FIELDS:
        w.away(w.rng.uniform(8000, 20000))
        w.page.locator(f"#id_{field}").scroll_into_view_if_needed()
        box = w.page.locator(f"#id_{field}").bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        data = {"items": [{"mimeType": "text/plain", "data": w.answers[field]}], "dragOperationsMask": 1}
        for kind in ("dragEnter", "dragOver", "drop"):
            w.cdp.send("Input.dispatchDragEvent", {"type": kind, "x": x, "y": y, "data": data})


def transcriber(w):
    """Types out a text read from another window: an even rhythm, no pauses, no corrections."""
    for field in FIELDS:
        w.focus(field)
        for ch in w.answers[field]:
            w.key(ch, w.rng.gauss(165, 20))


def value_setter(w):
    for field in FIELDS:
        w.wait(800)
        w.page.locator(f"#id_{field}").evaluate("(el, text) => { el.value = text; }", w.answers[field])


def key_extension(w, interval=12):
    """An extension's content script: per character a synthetic keydown, the value set, an input event."""
    for field in FIELDS:
        w.focus(field)
        for ch in w.answers[field]:
            w.wait(interval)
            w.page.locator(f"#id_{field}").evaluate(
                """(el, ch) => {
                    el.dispatchEvent(new KeyboardEvent('keydown', {key: ch, bubbles: true}));
                    el.value += ch;
                    el.dispatchEvent(new InputEvent('input', {inputType: 'insertText', data: ch, bubbles: true}));
                    el.dispatchEvent(new KeyboardEvent('keyup', {key: ch, bubbles: true}));
                }""", ch)


def slow_key_extension(w):
    """The same extension, paced like a person (160 ms a key)."""
    key_extension(w, interval=160)


def source_copier(w):
    """Copies the source turn and changes a word or two (a rewrite that is not one)."""
    w.page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    source = w.page.locator("#target-turn .text, #target-turn").first.inner_text().strip()
    source = re.search(r"I need a cheap table.*please\.", source).group(0)
    edits = {"paraphrase": ("I need", "I want"), "typos": ("table", "tabel"), "verbose": ("I need", "Hello, I need"),
             "simplified": (" please.", ".")}
    for field in FIELDS:
        w.focus(field)
        w.page.evaluate("text => navigator.clipboard.writeText(text)", source)
        w.page.keyboard.press("Control+V")
        old, new = edits[field]
        w.wait(2000)
        w.page.locator(f"#id_{field}").evaluate("(el, s) => { const i = el.value.indexOf(s); el.setSelectionRange(i, i + s.length); }", old)
        for ch in new:
            w.key(ch, w.rng.uniform(150, 300))


HONEST = {"steady": steady_typist, "thinker": slow_thinker, "corrector": heavy_corrector, "phone": phone_keyboard,
          "mei": chinese_ime, "retyper": fluent_retyper}
CHEATS = {"paster": llm_paster, "dropper": llm_dropper, "transcriber": transcriber, "setter": value_setter,
          "extension": key_extension, "slowext": slow_key_extension, "copier": source_copier}


def fake_dictation(w):
    """A script that stages an input method's events around the value it sets, to pass for dictation."""
    for field in FIELDS:
        w.focus(field)
        w.wait(3000)
        w.page.locator(f"#id_{field}").evaluate(
            """(el, text) => {
                el.dispatchEvent(new CompositionEvent('compositionstart', {data: ''}));
                el.value = text;
                el.dispatchEvent(new InputEvent('input', {inputType: 'insertCompositionText', data: text, isComposing: true}));
                el.dispatchEvent(new CompositionEvent('compositionend', {data: text}));
            }""", w.answers[field])


CHEATS["fakedictation"] = fake_dictation


def source_typist(w):
    """Types the source turn out into every field with a word or two changed, at an even rhythm."""
    source = re.search(r"I need a cheap table.*please\.", w.page.locator("#target-turn").inner_text()).group(0)
    texts = {"paraphrase": source.replace("I need", "I want"), "typos": source.replace("table", "tabel"),
             "verbose": "Hello, " + source, "simplified": source.replace(" please.", ".").replace("I need a ", "")}
    for field in FIELDS:
        w.focus(field)
        for ch in texts[field]:
            w.key(ch, w.rng.gauss(165, 20))


CHEATS["sourcetypist"] = source_typist

#: What gives each cheater away: the flag that must be on the response (others may be too).
GIVEN_AWAY_BY = {"paster": "paste_dominant", "dropper": "paste_dominant", "transcriber": "transcription_rhythm",
                 "setter": "synthetic_input", "extension": "synthetic_input", "slowext": "synthetic_input",
                 "fakedictation": "synthetic_input", "copier": "paste_dominant", "sourcetypist": "transcription_rhythm"}


def test_honest_writers_are_not_flagged_and_each_cheater_is(chromium_browser, live_server, make_annotator, organizer):
    personas = {**HONEST, **CHEATS}
    job = make_live_job(make_corpus(dialogs=2 * len(personas), user_turns=1), name="Table rewrites")
    chinese = make_job("Hotel rewrites in Chinese", [("user", ime.SOURCE, ime.VALUES)])
    workers = {}
    for name, act in personas.items():
        workers[name] = make_annotator(name)[1]
        on = "Hotel rewrites in Chinese" if act is chinese_ime else "Table rewrites"
        w = Writer(chromium_browser, live_server.url, name, phone=name == "phone", job=on)
        act(w)
        w.submit()
    reports = {job.pk: job_flags(job), chinese.pk: job_flags(chinese)}
    flagged = {}
    for name, worker in workers.items():
        response = Response.objects.get(worker=worker)
        flagged[name] = set(reports[response.item.job_id].evidence.get(response.pk, {}))

    # A phone's keyboard and dictation, a pinyin IME, pauses, corrections: nothing to say against them.
    assert {name: flagged[name] for name in HONEST} == {name: set() for name in HONEST}
    # Each cheater carries the flag that says how the text came, in words and numbers.
    assert {name: GIVEN_AWAY_BY[name] in flagged[name] for name in CHEATS} == {name: True for name in CHEATS}
    # An extension's events say "typed" of nothing: its text arrived without keys, whatever its pace.
    assert "transcription_rhythm" not in flagged["slowext"] and "implausible_speed" not in flagged["extension"]
    slowext = Response.objects.get(worker=workers["slowext"])
    why = reports[job.pk].evidence[slowext.pk]["synthetic_input"]
    assert f"paraphrase: {len(slowext.answers['paraphrase'])} characters inserted with no key pressed" in why
    assert typing_flags.CODES["synthetic_input"] == "text that arrived without key presses"
