"""Reads for RADDLE's out-of-domain export: the utterances another corpus offers."""
from ..exporters.out_of_domain import PoolUtterance
from ..models import Corpus, Turn

MAX_POOL = 500_000  # user turns read from the other corpus; more is refused, not silently cut


def corpus_named(corpus_id) -> Corpus | None:
    return Corpus.objects.filter(pk=corpus_id).first()


def user_utterances(corpus: Corpus) -> list[PoolUtterance]:
    """Every user turn with text of `corpus`, in corpus order (dialog position, then turn index)."""
    rows = (
        Turn.objects.filter(dialog__corpus=corpus, speaker="user").exclude(text="")
        .order_by("dialog__position", "index").values_list("dialog__external_id", "index", "text")[: MAX_POOL + 1]
    )
    return [PoolUtterance(dialog, index, text) for dialog, index, text in rows if text.strip()]
