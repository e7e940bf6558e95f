"""What the demo's simulated annotators type. Pure: no Django import.

A careful annotator writes four rewrites that keep every slot value; a careless one makes the
mistakes the checks exist to catch (drops a slot value, copies the original, pads too little),
then corrects them when the page refuses the submission.
"""
import re

_SWAPS = [
    ("I'm looking for", "I am searching for"), ("can you find me", "could you look up"), ("I want to eat", "I'd like to have"),
    ("Could you help me find", "Can you point me to"), ("Yes please", "Sure"), ("book a table", "reserve a table"),
    ("Please reserve it", "Please book it"), ("That sounds good", "Sounds great"), ("Thanks", "Thank you"),
    ("that's all I need", "that is everything"), ("Great", "Wonderful"), ("Perfect", "Excellent"), ("goodbye", "bye"),
    ("restaurant", "place to eat"), ("please", "if possible"),
]
_FILLERS = ["so", "the", "a", "please", "i", "to", "it", "that", "and", "for", "on", "in", "can", "you", "me", "be", "should", "is"]


def paraphrase(text, rng):
    out = text
    for old, new in rng.sample(_SWAPS, len(_SWAPS)):
        if old in out:
            out = out.replace(old, new, 1)
    if out == text:
        out = "Hello, " + text[0].lower() + text[1:]
    return out


def typos(text, slot_values, rng):
    protected = {w.lower() for v in slot_values for w in v.split()}
    words = text.split(" ")
    candidates = [i for i, w in enumerate(words) if len(w) > 3 and w.strip(".,?!").lower() not in protected]
    for i in rng.sample(candidates, min(2, len(candidates))):
        w = words[i]
        j = rng.randrange(1, len(w) - 2)
        words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2 :]
    out = " ".join(words)
    return out if out != text else text.replace(" ", "  ", 1).rstrip(".") + ".."


def verbose(text, rng):
    lead = rng.choice(["Hello there, I was wondering whether you might be able to help me with something.",
                       "Good evening, I hope you are well, and I have a small request for you."])
    return f"{lead} {text} Thank you so much in advance for your help."


def simplified(text, slot_values):
    words = [w for w in re.findall(r"[\w']+", text) if w.lower() not in _FILLERS]
    short = " ".join(words[: max(1, len(words) - 3)])
    for value in slot_values:
        if value.lower() not in short.lower():
            short += " " + value
    if len(short.split()) >= len(text.split()):
        short = " ".join(slot_values) or words[0]
    return short


def careful_answers(text, slot_values, rng):
    return {"paraphrase": paraphrase(text, rng), "typos": typos(text, slot_values, rng),
            "verbose": verbose(text, rng), "simplified": simplified(text, slot_values)}


def careless_answers(text, slot_values, rng):
    """A first attempt with one typical mistake; the page should refuse it."""
    answers = careful_answers(text, slot_values, rng)
    mistake = rng.choice(["drop_slot", "copy", "short_verbose"] if slot_values else ["copy", "short_verbose"])
    if mistake == "drop_slot":
        value = rng.choice(slot_values)
        answers["paraphrase"] = re.sub(re.escape(value), "something", answers["paraphrase"], flags=re.I)
    elif mistake == "copy":
        answers["paraphrase"] = text
    else:
        answers["verbose"] = simplified(text, slot_values)
    return answers


def sloppy(text, rng):
    """Words shuffled, lower-cased, unpunctuated: passes the automatic checks, fails a human reader."""
    words = re.findall(r"[\w']+", text.lower())
    rng.shuffle(words)
    return " ".join(words)


def looks_recognizable(text):
    """The simulated voters' reading: a sentence that starts with a capital and ends like one."""
    text = text.strip()
    return bool(text) and text[0].isupper() and text[-1] in ".?!"
