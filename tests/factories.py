"""Small builders for test data, made through the ORM and the services (not fixtures files)."""
from annotation.models import Corpus, Dialog, Turn
from annotation.services.jobs import create_job, launch_job

#: An id no row has. The suite's sequences are not reset between tests, so a small one (999) is
#: reached on a long run, and a test then finds the object it says is missing.
MISSING_ID = 2_147_483_647


def make_corpus(name="restaurants", dialogs=3, user_turns=2, source_format="jsonl"):
    """A corpus of `dialogs` dialogs, each alternating user/system, with slot values on user turns."""
    corpus = Corpus.objects.create(name=name, source_format=source_format)
    for d in range(dialogs):
        dialog = Dialog.objects.create(corpus=corpus, external_id=f"d{d}", position=d)
        for t in range(user_turns):
            area = ["centre", "north", "south"][(d + t) % 3]
            Turn.objects.create(
                dialog=dialog,
                index=2 * t,
                speaker="user",
                text=f"I need a cheap table for {t + 2} people in the {area} please.",
                slot_values=[{"slot": "pricerange", "value": "cheap"}, {"slot": "area", "value": area}],
            )
            Turn.objects.create(dialog=dialog, index=2 * t + 1, speaker="system", text="Which day would you like?")
    return corpus


def make_live_job(corpus=None, redundancy=1, **kwargs):
    job = create_job(corpus=corpus or make_corpus(), name=kwargs.pop("name", "rewrite job"), redundancy=redundancy, **kwargs)
    return launch_job(job)


def good_answers(item):
    """Rewrites of an item's utterance that pass every check."""
    text = item.payload["utterance"]
    return {
        "paraphrase": "Please, " + text.replace("I need", "I would like"),
        "typos": text.replace("table", "tabel"),
        "verbose": "Hello there, if it is not too much trouble, " + text,
        "simplified": " ".join(item.payload["slot_values"]) + " table",
    }
