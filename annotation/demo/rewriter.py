"""What the demo's simulated annotators type. Pure: no Django import.

A careful annotator writes four rewrites that keep every slot value; a careless one makes the
mistakes the checks exist to catch (drops a slot value, copies the original, pads too little),
then corrects them when the page refuses the submission.
"""
import re

# Phrases of the simulated corpus and the ways an annotator may say them instead.
_SWAPS = {
    "I'm looking for": ["I am searching for", "I need", "I'd like to find", "I want", "I'm after", "I'm trying to find"],
    "can you find me": ["could you look up", "please find me", "could you track down", "help me find", "search for"],
    "I want to eat": ["I'd like to have", "I fancy", "I feel like having", "I'm craving", "I'd love some"],
    "Could you help me find": ["Can you point me to", "Please find", "Help me locate", "Do you know", "Could you suggest"],
    "Yes please": ["Sure", "Yes", "Great", "Okay then", "Yes, go ahead"],
    "book a table": ["reserve a table", "get a table", "book me a table", "make a booking", "grab a table"],
    "Please reserve it": ["Please book it", "Book it", "Go ahead and reserve it", "Make a reservation", "Reserve a spot"],
    "That sounds good": ["Sounds great", "Lovely", "That works", "Fine by me", "Good"],
    "Can you book it": ["Could you reserve it", "Would you book it", "Book it", "Reserve it"],
    "Thanks": ["Thank you", "Cheers", "Many thanks", "Thanks a lot"],
    "that's all I need": ["that is everything", "nothing else", "I'm all set", "that covers it"],
    "Great": ["Wonderful", "Brilliant", "Super", "Excellent"],
    "Perfect": ["Excellent", "Ideal", "Lovely", "Splendid"],
    "goodbye": ["bye", "see you", "farewell", "have a good day"],
    "restaurant": ["place to eat", "eatery", "spot", "dining place"],
    "please": ["if possible", "thanks", "if you can"],
}
_FILLERS = ["so", "the", "a", "please", "i", "to", "it", "that", "and", "for", "on", "in", "can", "you", "me", "be", "should", "is"]


_OPENERS = ["Hello, ", "Hi there, ", "So, ", "Okay, ", "Um, ", "Right, "]
_LEADS = [
    "Hello there, I was wondering whether you might be able to help me with something.",
    "Good evening, I hope you are well, and I have a small request for you.",
    "Hi, sorry to bother you, but I could really use a hand with a booking.",
    "Good morning, I am planning a meal out and would love some help.",
    "Hello, I have been meaning to ask about this for a while now.",
    "Hi, I am organising something and I think you can probably help me.",
    "Hey, quick question for you, since I am trying to plan an evening out.",
    "Good afternoon, I wonder if you could assist me with a reservation.",
    "Hello, a friend recommended asking you, so here is what I am after.",
    "Hi there, I hope this is the right place to ask about restaurants.",
]
_TRAILERS = [
    "Thank you so much in advance for your help.",
    "I really appreciate you taking the time to look into this.",
    "Many thanks, that would make my evening a lot easier.",
    "Let me know if you need anything else from me to sort it out.",
    "Thanks a lot, I am looking forward to hearing back from you.",
    "That would be a great help to me and my friends this week.",
    "I would be very grateful for whatever you can find for me.",
    "Cheers, you have been really helpful so far with all of this.",
    "Thanks, I know it is a lot to ask at such short notice.",
]
_CLOSINGS = [" if you can.", ", thanks.", " if that is possible.", ", please.", " when you get a moment."]
_NEIGHBOURS = {c: n for c, n in zip("qwertyuiopasdfghjklzxcvbnm", [
    "wa", "qes", "wrd", "etf", "ryg", "tuh", "yij", "uok", "ipl", "ol", "qsz", "awdx", "sefc", "drgv", "fthb", "gyjn",
    "hukm", "jil", "kop", "asx", "zsdc", "xdfv", "cfgb", "vghn", "bhjm", "njk"], strict=True)}
_ASKS = ["Need {v}.", "Looking for {v}.", "{v}, please.", "Find {v}?", "Want {v}.", "Any {v}?", "Get me {v}.",
         "{v} wanted.", "Seeking {v}.", "After {v}."]
_ASIDES = ["It is for a small celebration.", "We are visiting for the weekend.", "My parents are in town.",
           "It is a surprise for my partner.", "We have not been out in ages.", "A colleague is leaving.",
           "We are a bit of a fussy group.", "It is my first time in Cambridge."]


# Independent annotators write differently: each choice below is drawn from the annotator's own
# random stream, so two honest rewrites of one turn are no closer to each other than to the turn.
def paraphrase(text, rng):
    out = text
    for old in rng.sample(sorted(_SWAPS), len(_SWAPS)):
        if old in out and rng.random() < 0.7:
            out = out.replace(old, rng.choice(_SWAPS[old]), 1)
    if rng.random() < 0.5:  # a closing of the annotator's own
        out = out.rstrip(".?! ") + rng.choice(_CLOSINGS)
    if out == text or rng.random() < 0.6:
        out = rng.choice(_OPENERS) + out[0].lower() + out[1:]
    return out


def typos(text, slot_values, rng):
    """Two typing mistakes (a swap, a dropped, doubled or neighbouring letter) in words that are
    not slot values, at places of the annotator's own choosing."""
    protected = {w.lower() for v in slot_values for w in v.split()}
    words = text.split(" ")
    candidates = [i for i, w in enumerate(words) if len(w) > 3 and w.strip(".,?!").lower() not in protected]
    for i in rng.sample(candidates, min(2, len(candidates))):
        w = words[i]
        # Only between two different letters: a change next to an apostrophe or between twin
        # letters is nothing a reader (or the "unchanged" check) would count as a typo.
        places = [j for j in range(1, len(w) - 2) if w[j].isalpha() and w[j + 1].isalpha() and w[j] != w[j + 1]]
        if not places:
            continue
        j = rng.choice(places)
        kind = rng.choice(["swap", "drop", "double", "neighbour"])
        if kind == "swap":
            words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2 :]
        elif kind == "drop":
            words[i] = w[:j] + w[j + 1 :]
        elif kind == "double":
            words[i] = w[: j + 1] + w[j] + w[j + 1 :]
        else:
            near = _NEIGHBOURS.get(w[j].lower(), "e")
            words[i] = w[:j] + rng.choice(near) + w[j + 1 :]
    out = " ".join(words)
    if out == text:  # nothing to change (short words, or twin letters): drop a letter instead
        longest = max(range(len(words)), key=lambda k: len(words[k].strip(".,?!")))
        w = words[longest]
        words[longest] = w[:1] + w[2:] if len(w) > 2 else w + w[-1]
        out = " ".join(words)
    return out


def verbose(text, rng):
    return f"{rng.choice(_LEADS)} {paraphrase(text, rng)} {rng.choice(_ASIDES)} {rng.choice(_TRAILERS)}"


def simplified(text, slot_values, rng=None):
    if rng is not None and slot_values and rng.random() < 0.85:
        values = rng.sample(slot_values, len(slot_values))  # the annotator's own order
        short = rng.choice(_ASKS).format(v=" ".join(values))
        short = short[0].upper() + short[1:]
        if len(short.split()) < len(text.split()):
            return short
    drop = 0.8 if rng is None else rng.uniform(0.5, 1.0)  # how hard the annotator trims
    words = [w for w in re.findall(r"[\w']+", text) if w.lower() not in _FILLERS or (rng and rng.random() > drop)]
    short = " ".join(words[: max(1, len(words) - (3 if rng is None else rng.randint(1, 3)))])
    for value in slot_values:
        if value.lower() not in short.lower():
            short += " " + value
    if len(short.split()) >= len(text.split()):
        short = " ".join(slot_values) or words[0]
    return short


def careful_answers(text, slot_values, rng):
    return {"paraphrase": paraphrase(text, rng), "typos": typos(text, slot_values, rng),
            "verbose": verbose(text, rng), "simplified": simplified(text, slot_values, rng)}


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
