"""Scripted behaviour profiles for the typing-flag harness (`perf/bench_typing.py`): how a simulated
worker enters one answer text, as a list of actions with waits, randomised per run.

Timing distributions and where they come from:

- Inter-key intervals: lognormal per typist. Dhakal, Feit, Kristensson & Oulasvirta 2018
  ("Observations on typing from 136 million keystrokes", CHI) report a mean inter-key interval of
  about 240 ms over 168,000 typists with most between about 120 and 400 ms, and a right-skewed
  distribution within each typist; a run draws its typist's median from 150-320 ms and the spread
  (sigma of the log) from 0.3-0.5.
- Corrections: a wrong key followed by backspace at 1-4% of keys (Dhakal et al. 2018: corrections
  are common; their participants left about 1% of errors uncorrected and corrected more).
- Composing: longer intervals at word boundaries, and planning pauses of 2 s or more before some
  words (Conijn, Roeser & van Zaanen 2019, "Understanding the keystroke log: the effect of writing
  task on keystroke features": composing shows more and longer pauses between words and sentences
  than copying). Between-word extra: lognormal, median 500 ms, sigma 0.9; planning pause at 10-25%
  of word boundaries, 2-8 s.
- Transcribing (typing out a text read elsewhere, e.g. a chatbot's answer in another window): the
  same typist's key intervals with copy-typing's small word-boundary lengthening (median 60 ms) and a
  look back at the source every 3-6 words (lognormal, median 350 ms, sigma 0.4), no planning pauses.
  Feit, Weir & Oulasvirta 2016 ("How we type", CHI) measured transcription typing this way.
- Machine speed: keys 5-30 ms apart (a script or an automation tool typing; Dhakal et al.'s fastest
  typists average about 120 words a minute, 100 ms a key).
- Pasting, dropping after a blur, setting the value by script: Potato's AI-assistance behaviours;
  the away time before a drop is 15-90 s (switching to another window to get text).
"""
import random

PROFILES = ["composed", "transcribing", "pasting", "drop_after_blur", "script", "machine"]

#: The flags a profile should raise (the first is its own; recall is measured on it).
EXPECTED = {
    "composed": set(),
    "transcribing": {"transcription_rhythm"},
    "pasting": {"paste_dominant"},
    "drop_after_blur": {"composed_offscreen", "paste_dominant"},
    "script": {"synthetic_input"},
    "machine": {"implausible_speed"},
}
PRIMARY = {"transcribing": "transcription_rhythm", "pasting": "paste_dominant", "drop_after_blur": "composed_offscreen",
           "script": "synthetic_input", "machine": "implausible_speed"}


class Typist:
    def __init__(self, rng: random.Random):
        self.rng = rng
        self.median = rng.uniform(150, 320)
        self.sigma = rng.uniform(0.3, 0.5)
        self.error_rate = rng.uniform(0.01, 0.04)
        self.plan_rate = rng.uniform(0.10, 0.25)

    def iki(self) -> float:
        return self.rng.lognormvariate(0, self.sigma) * self.median


def actions(profile: str, text: str, rng: random.Random) -> list[tuple]:
    """The actions entering `text` into the focused field: ("wait", ms), ("key", char),
    ("backspace",), ("paste", text), ("blur_away", ms) (leave the field and the window for ms),
    ("drop", text), ("set", text, with_input_event)."""
    typist = Typist(rng)
    out: list[tuple] = [("wait", rng.uniform(1500, 6000))]  # reading the item
    if profile == "composed":
        out += _typed(text, typist, rng, composing=True)
        if rng.random() < 0.3:  # an honest glance elsewhere after writing (instructions, another tab)
            out += [("blur_away", rng.uniform(2000, 10000)), ("wait", rng.uniform(300, 1000))]
    elif profile == "transcribing":
        out += _typed(text, typist, rng, composing=False)
    elif profile == "pasting":
        out += [("paste", text), ("wait", rng.uniform(500, 3000))]
    elif profile == "drop_after_blur":
        out += [("blur_away", rng.uniform(15000, 90000)), ("wait", rng.uniform(200, 1500)), ("drop", text)]
    elif profile == "script":
        out += [("set", text, rng.random() < 0.5)]
    elif profile == "machine":
        for ch in text:
            out += [("wait", rng.uniform(5, 30)), ("key", ch)]
    else:
        raise ValueError(profile)
    return out


def _typed(text: str, typist: Typist, rng: random.Random, *, composing: bool) -> list[tuple]:
    out: list[tuple] = []
    words_since_look = 0
    look_every = rng.randint(3, 6)
    for i, ch in enumerate(text):
        wait = typist.iki()
        if i and text[i - 1] == " ":  # the first key of a word
            if composing:
                wait += rng.lognormvariate(0, 0.9) * 500
                if rng.random() < typist.plan_rate:
                    wait += rng.uniform(2000, 8000)
            else:
                wait += rng.lognormvariate(0, 0.5) * 60
                words_since_look += 1
                if words_since_look >= look_every:
                    wait += rng.lognormvariate(0, 0.4) * 350
                    words_since_look, look_every = 0, rng.randint(3, 6)
        if rng.random() < typist.error_rate:
            out += [("wait", wait), ("key", "x"), ("wait", typist.iki() * 1.5), ("backspace",)]
            wait = typist.iki()
        out += [("wait", wait), ("key", ch)]
    return out


def simulated_record(steps: list[tuple], start_length: int = 0) -> tuple[dict, str]:
    """The log `static/typing.js` would write for these actions, and the text: for calibrating
    thresholds without a browser (the harness measures the real page)."""
    from annotation.text import typing_log

    events, text, pending = [("f", 0, None)], "", 0.0
    for step in steps:
        kind = step[0]
        if kind == "wait":
            pending += step[1]
            continue
        if kind == "key":
            text += step[1]
            events.append(("k", pending, None))
        elif kind == "backspace":
            text = text[:-1]
            events.append(("d", pending, None))
        elif kind == "paste":
            text += step[1]
            events.append(("p", pending, len(step[1])))
        elif kind == "drop":
            text += step[1]
            events += [("f", pending, None), ("r", 0, len(step[1]))]
        elif kind == "blur_away":
            events += [("b", pending, None), ("w", 0, None), ("g", step[1], None)]
        elif kind == "set":
            text = step[1]
            events.append(("x" if step[2] else "s", pending, len(step[1]) - start_length))
        pending = 0.0
    return typing_log.build_record(events, start=start_length), text
