"""Slot values read from the real MultiWOZ 2.1 validation split (ConvLab-2's copy in the shared data
folder, read where it lies and never copied into the repository): no value is a word prefix, and
every user turn's own text passes its slot check. Pure: no database."""
import re
import zipfile
from pathlib import Path

import pytest

from annotation.importers.base import NON_VALUES
from annotation.importers.multiwoz import MultiWOZReader
from annotation.text.rewrite_checks import check_rewrite
from annotation.text.text_units import contains_value
from tests.shared_data import missing, shared_data

VALIDATION = shared_data("multiwoz21-val-convlab2.json.zip")


def measure(data_path: Path) -> dict:
    """Counts over every user turn: values stored, word-prefix values, turns whose own text fails
    the slot check, and span_info mentions (of real values) found or missed."""
    counts = {"user_turns": 0, "values": 0, "prefixes": 0, "source_fails": 0, "spans_found": 0, "spans_missed": 0}
    failures = []
    with MultiWOZReader({"data": data_path}) as reader:
        for dialog in reader.dialogs():
            for turn in dialog.turns:
                if turn.speaker != "user":
                    continue
                counts["user_turns"] += 1
                values = [v["value"] for v in turn.slot_values]
                counts["values"] += len(values)
                for value in values:
                    # A prefix: the value is not whole words of the text, but starts a word there.
                    whole = contains_value(turn.text, value, unspaced=False)
                    if not whole and re.search(r"(?<!\w)" + re.escape(value), turn.text, re.IGNORECASE):
                        counts["prefixes"] += 1
                problems = [p for p in check_rewrite("paraphrase", turn.text, turn.text, values) if p.code == "slot_value_missing"]
                if problems:
                    counts["source_fails"] += 1
                    failures.append((dialog.external_id, turn.text, values))
                stored_slots = {v["slot"] for v in turn.slot_values}
                for act, slot, value, *_ in turn.raw.get("span_info", []):
                    if str(value).strip().lower() in NON_VALUES:
                        continue
                    name = f"{act.split('-', 1)[0].lower()}-{slot.lower()}"
                    counts["spans_found" if name in stored_slots else "spans_missed"] += 1
    counts["failures"] = failures[:5]
    return counts


@pytest.mark.skipif(not VALIDATION.exists(), reason=missing(VALIDATION))
def test_real_multiwoz_values_are_whole_words_and_every_source_passes_its_slot_check(tmp_path, capsys):
    with zipfile.ZipFile(VALIDATION) as archive:
        archive.extract("val.json", tmp_path)  # a temporary copy outside the repository
    counts = measure(tmp_path / "val.json")
    with capsys.disabled():
        print(f"\nMultiWOZ 2.1 validation: {counts}")
    assert counts["user_turns"] > 7000
    assert counts["values"] > 6000
    assert counts["prefixes"] == 0
    assert counts["source_fails"] == 0, counts["failures"]
    assert counts["spans_missed"] == 0
