"""RADDLE's out-of-domain set (PROTOCOLS.md 6c): in-domain dialogs whose user turns are mixed with
utterances drawn from another corpus. Pure: no Django import.

Each user turn with text is chosen with probability `rate`, by a generator seeded with (`seed`,
dialog id), so the same dialogs, pool and settings give the same set whatever else is exported.
A chosen turn gets an utterance drawn (with replacement) from the pool, and then either

- `replace`: the utterance takes the turn's place (its slot values dropped: they were the
  in-domain turn's), or
- `interleave`: the utterance is inserted before the turn, followed by the system's default
  answer, so speakers still alternate and every in-domain turn is kept.

The new user turn is labelled out of domain the way each format labels an out-of-scope turn
(`OOS_TURN`: MultiWOZ `general-oos`, DSTC9 `"oos": true`, DSTC6 `oos_turns`, JSONL `"oos": true`;
docs/formats.md). `mix` returns the dialogs and the mapping the manifest lists: for every new turn,
where it is, what it replaced, and the pool dialog and turn it came from.
"""
from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .base import OOS_REPLY, OOS_TURN, DialogRecord, ExportError, TurnRecord

SET_NAME = "out_of_domain"
MODES = ("replace", "interleave")
DEFAULT_ANSWER = "I am sorry, I do not know that"


@dataclass(frozen=True)
class PoolUtterance:
    dialog: str
    turn: int
    text: str


def check_options(rate, seed, mode) -> None:
    """Refuse a rate outside (0, 1], a negative or fractional seed, or an unknown mode, in words."""
    if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 < rate <= 1:
        raise ExportError(f"The out-of-domain rate must be a number above 0 and at most 1 (the share of user turns mixed); got {rate!r}.",
                          field="out_of_domain_rate")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ExportError(f"The out-of-domain seed must be a whole number of 0 or more; got {seed!r}.", field="out_of_domain_seed")
    if mode not in MODES:
        raise ExportError(f"The out-of-domain mode must be one of {', '.join(MODES)}; got {mode!r}.", field="out_of_domain_mode")


def mix(
    dialogs: Iterable[DialogRecord], pool: Sequence[PoolUtterance], *, rate: float, seed: int, mode: str,
    default_answer: str = DEFAULT_ANSWER,
) -> tuple[list[DialogRecord], list[dict]]:
    """The dialogs with out-of-domain user turns mixed in, and the mapping (one row per new turn)."""
    check_options(rate, seed, mode)
    if not pool:
        raise ExportError("The other corpus has no user turns with text to draw out-of-domain utterances from.")
    mixed, mapping = [], []
    for dialog in dialogs:
        rng = random.Random(f"{seed}:{dialog.external_id}")
        turns: list[TurnRecord] = []
        for turn in dialog.turns:
            if turn.speaker != "user" or not turn.text.strip() or turn.inserted or rng.random() >= rate:
                turns.append(turn)
                continue
            drawn = pool[rng.randrange(len(pool))]
            new = TurnRecord(turn.index, "user", drawn.text, [], {}, inserted=OOS_TURN)
            row = {"dialog": dialog.external_id, "turn": turn.index, "mode": mode, "text": drawn.text,
                   "source_dialog": drawn.dialog, "source_turn": drawn.turn}
            if mode == "replace":
                turns.append(new)
                row["replaced_text"] = turn.text
            else:
                turns += [new, TurnRecord(turn.index, "system", default_answer, [], {}, inserted=OOS_REPLY), turn]
                row["inserted_before"] = turn.index
            row["position"] = len(turns) - (1 if mode == "replace" else 3)  # the new turn's place in the exported dialog
            mapping.append(row)
        mixed.append(DialogRecord(dialog.external_id, dialog.meta, turns))
    return mixed, mapping
