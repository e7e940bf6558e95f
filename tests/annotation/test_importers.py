"""Corpus import: each format read into dialogs, turns and slot values; malformed files refused
with their place and reason and nothing written; the command; the queued import and its run row."""
import json
import re
import shutil
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connections, transaction

from annotation.importers.base import locate
from annotation.models import Corpus, Dialog, ImportRun, RunStatus, Turn
from annotation.services import imports, jobs
from annotation.services.imports import ImportFailed, import_corpus, start_import
from annotation.tasks import run_import

CORPORA = Path(__file__).resolve().parents[1] / "fixtures" / "corpora"
MULTIWOZ = CORPORA / "multiwoz21-sample.json"
DSTC6 = CORPORA / "dstc6-sample.json"
DSTC9 = CORPORA / "dstc9-track1"
JSONL = CORPORA / "quorum-sample.jsonl"

pytestmark = pytest.mark.django_db


def counts():
    return Corpus.objects.count(), Dialog.objects.count(), Turn.objects.count()


def turns_of(corpus, external_id):
    return list(Turn.objects.filter(dialog__corpus=corpus, dialog__external_id=external_id).order_by("index"))


def multiwoz_source():
    return json.loads(MULTIWOZ.read_text())


# -- each format ---------------------------------------------------------------------------------
def test_multiwoz_turns_speakers_and_slot_values_in_their_surface_form():
    corpus = import_corpus(name="mwoz", source_format="multiwoz", files={"data": MULTIWOZ})

    source = multiwoz_source()["SNG90001.json"]
    dialog = corpus.dialogs.get()
    assert (dialog.external_id, dialog.position) == ("SNG90001.json", 0)
    assert dialog.meta == {"goal": source["goal"]}
    turns = turns_of(corpus, "SNG90001.json")
    assert [t.speaker for t in turns] == ["user", "system"] * 3
    assert [t.text for t in turns] == [entry["text"] for entry in source["log"]]
    assert turns[0].slot_values == [
        {"slot": "restaurant-price", "value": "cheap"},
        {"slot": "restaurant-area", "value": "centre"},
        {"slot": "restaurant-food", "value": "Thai"},  # "thai" in the annotation, "Thai" in the text
    ]
    assert {v["value"] for v in turns[2].slot_values} == {"3", "18:30", "Sunday"}
    assert turns[4].slot_values == []  # "none" values name nothing
    assert all(t.slot_values == [] for t in turns if t.speaker == "system")
    # Everything needed to write the dialog back in MultiWOZ form is kept.
    for turn, entry in zip(turns, source["log"], strict=True):
        assert turn.raw == {"metadata": entry["metadata"], "dialog_act": entry["dialog_act"], "span_info": entry["span_info"]}
    summary = corpus.import_summary
    assert (summary.dialogs, summary.turns, summary.user_turns, summary.slot_values) == (1, 6, 3, 6)


def _one_turn_corpus(tmp_path, text, span_info, dialog_act=None):
    log = [{"text": text, "metadata": {}, "dialog_act": dialog_act or {}, "span_info": span_info}]
    data = tmp_path / "data.json"
    data.write_text(json.dumps({"MUL0001.json": {"goal": {}, "log": log}}))
    corpus = import_corpus(name="one turn", source_format="multiwoz", files={"data": data})
    (turn,) = turns_of(corpus, "MUL0001.json")
    return turn.slot_values


def test_multiwoz_slot_values_from_dialog_act_deduplicated_and_only_when_in_the_text(tmp_path):
    text = "Any guesthouses in the East? At least 4 stars, I don't care about price."
    values = _one_turn_corpus(
        tmp_path,
        text,
        # Area's span is word 4 ("East"; "?" is word 5 as MultiWOZ counts); the span of Name
        # lies outside the turn, so its value is looked for in the text and is not there.
        [["Hotel-Inform", "Area", "east", 4, 4], ["Hotel-Inform", "Name", "birch house", 40, 41]],
        {
            "Hotel-Inform": [["Type", "guesthouse"], ["Area", "east"], ["Stars", "4"], ["Price", "dontcare"]],
            "Hotel-Request": [["Parking", "?"]],
        },
    )
    assert values == [
        {"slot": "hotel-area", "value": "East"},
        # dialog_act's "guesthouse" is only a prefix of "guesthouses": not a whole word, not stored
        {"slot": "hotel-stars", "value": "4"},
    ]


def test_multiwoz_span_indices_give_the_words_as_written_in_tokenised_text(tmp_path):
    # ConvLab-2's tokenised text: the indices count words split on spaces, ends inclusive.
    text = "I want a moderately priced place for one person at 9:15 on the same day ."
    spans = [
        ["Restaurant-Inform", "Price", "moderate", 3, 3],  # "moderately": the whole word, not a prefix
        ["Restaurant-Inform", "People", "1", 7, 7],  # a number word kept as the user wrote it
        ["Restaurant-Inform", "Time", "09:15", 10, 10],  # a time in the user's format
        ["Restaurant-Inform", "Day", "saturday", 13, 14],  # what the user said for it
        ["Restaurant-Inform", "Food", "dontcare", 0, 1],  # names no value
    ]
    acts = {"Restaurant-Inform": [["Price", "moderate"], ["People", "1"], ["Time", "09:15"], ["Area", "centre"]]}
    assert _one_turn_corpus(tmp_path, text, spans, acts) == [
        {"slot": "restaurant-price", "value": "moderately"},
        {"slot": "restaurant-people", "value": "one"},
        {"slot": "restaurant-time", "value": "9:15"},
        {"slot": "restaurant-day", "value": "same day"},
    ]


UNTOKENISED = "I don't mind, book it for 18:15. Two people, at the Christ's College cafe."


@pytest.mark.parametrize(
    "counted_as,indices",
    [("tokenised words: n't and . are words", [(8, 8), (10, 10), (15, 17)]), ("words between spaces", [(6, 6), (7, 7), (11, 12)])],
)
def test_multiwoz_span_indices_in_untokenised_text_either_way_of_counting(tmp_path, counted_as, indices):
    # The original data.json is not tokenised, and its indices are counted one way or the other.
    slots = [("Time", "18:15"), ("People", "2"), ("Name", "christ's college")]
    spans = [["Restaurant-Inform", slot, value, s, e] for (slot, value), (s, e) in zip(slots, indices, strict=True)]
    assert [v["value"] for v in _one_turn_corpus(tmp_path, UNTOKENISED, spans)] == [
        "18:15",  # not "18:15." and never "1" of "18:15"
        "Two",
        "Christ's College",
    ], counted_as


def test_multiwoz_a_value_glued_to_another_word_is_cut_out_only_where_it_stands_whole(tmp_path):
    # Tokenised (the final " ."), so "cotto?also" is one word, as ConvLab-2's copy has it.
    text = "leave after 16:15.get me a taxi to the cotto?also 12:15on friday ."
    spans = [
        ["Taxi-Inform", "Leave", "16:15", 2, 2],
        ["Taxi-Inform", "Dest", "cotto", 8, 8],
        ["Taxi-Inform", "Arrive", "12:15", 9, 9],
    ]
    assert [v["value"] for v in _one_turn_corpus(tmp_path, text, spans)] == ["16:15", "cotto", "12:15on"]


def test_locate_finds_values_as_whole_words_and_skips_non_values():
    text = "At least 2 guesthouses in the East, moderately priced"
    lowered = text.lower()
    assert locate(text, lowered, "east") == "East"  # not the "east" inside "least"
    assert locate(text, lowered, "guesthouses") == "guesthouses"
    assert locate(text, lowered, "guesthouse") is None  # a prefix of a word is not the word
    assert locate(text, lowered, "moderate") is None
    assert locate(text, lowered, "north") is None
    assert locate(text, lowered, "dontcare") is None
    # "İ".lower() is two characters, so positions in the lowered text no longer match the text.
    text = "İzmir Hotel, the East side, guesthouses"
    assert locate(text, text.lower(), "hotel") == "Hotel"
    assert locate(text, text.lower(), "east") == "East"
    assert locate(text, text.lower(), "guesthouse") is None


def test_dstc9_with_labels_and_knowledge():
    files = {"data": DSTC9 / "logs.json", "labels": DSTC9 / "labels.json", "knowledge": DSTC9 / "knowledge.json"}
    corpus = import_corpus(name="dstc9", source_format="dstc9", files=files)

    labels = json.loads((DSTC9 / "labels.json").read_text())
    assert corpus.meta == {"knowledge": json.loads((DSTC9 / "knowledge.json").read_text())}
    dialogs = list(corpus.dialogs.order_by("position"))
    assert [d.external_id for d in dialogs] == ["0", "1"]
    assert [d.meta for d in dialogs] == [{"label": labels[0]}, {"label": labels[1]}]
    turns = turns_of(corpus, "0")
    assert [t.speaker for t in turns] == ["user", "system", "user"]
    assert turns[2].text == "Before I do, can I bring my dog there?"
    assert all(t.slot_values == [] for t in turns)


def test_dstc9_logs_alone():
    corpus = import_corpus(name="logs only", source_format="dstc9", files={"data": DSTC9 / "logs.json"})
    assert corpus.meta == {}
    assert [d.meta for d in corpus.dialogs.all()] == [{}, {}]
    assert Turn.objects.filter(dialog__corpus=corpus).count() == 4


def test_dstc6_alternates_speakers_from_the_user_and_keeps_candidates():
    corpus = import_corpus(name="dstc6", source_format="dstc6", files={"data": DSTC6})

    source = json.loads(DSTC6.read_text())[0]
    dialog = corpus.dialogs.get()
    assert dialog.external_id == "t1-0001"
    assert dialog.meta == {"candidates": source["candidates"]}
    turns = turns_of(corpus, "t1-0001")
    assert [t.text for t in turns] == source["utterances"]
    assert [t.speaker for t in turns] == ["user", "system"] * 3
    assert (turns[4].text, turns[4].speaker) == ("<SILENCE>", "user")


def test_jsonl_slot_values_meta_and_blank_lines():
    corpus = import_corpus(name="jsonl", source_format="jsonl", files={"data": JSONL})

    dialogs = list(corpus.dialogs.order_by("position"))
    assert [d.external_id for d in dialogs] == ["q-001", "q-002"]
    assert dialogs[0].meta == {"source": "written for Quorum"}
    assert dialogs[1].meta == {}
    turns = turns_of(corpus, "q-002")
    assert [t.speaker for t in turns] == ["user", "system", "user"]
    assert turns[0].slot_values == [
        {"slot": "taxi-destination", "value": "Birch House"},
        {"slot": "taxi-leaveat", "value": "09:15"},
    ]
    assert turns[2].slot_values == []


def test_a_job_over_an_imported_corpus_shows_each_user_turn_with_its_slot_values_as_stored(tmp_path, monkeypatch):
    # create_job reads the turns' slot values back a chunk at a time (jobs.TURN_CHUNK): chunks of
    # three end inside a dialog and leave a last chunk of one.
    monkeypatch.setattr(jobs, "TURN_CHUNK", 3)
    said = [
        ('I want "Café Jello" at 18:30.', "Café Jello"),
        ("Anything cheap on back\\slash street?", "back\\slash street"),
        ("Thanks, bye.", None),
        ("Any 東 food?", "東"),
    ]
    log = []
    for text, value in said:
        acts = {"Restaurant-Inform": [["Name", value]]} if value else {}
        log += [{"text": text, "metadata": {}, "dialog_act": acts, "span_info": []},
                {"text": "Noted.", "metadata": {"restaurant": {"semi": {"food": "é"}}}, "dialog_act": {}, "span_info": []}]
    data = tmp_path / "data.json"
    data.write_text(json.dumps({"MUL0001.json": {"goal": {}, "log": log[:4]}, "MUL0002.json": {"goal": {}, "log": log[4:]}}))
    corpus = import_corpus(name="for a job", source_format="multiwoz", files={"data": data})

    job = jobs.create_job(corpus=corpus, name="rewrites")

    user_turns = Turn.objects.filter(dialog__corpus=corpus, speaker="user").order_by("dialog__position", "index")
    assert [(t.text, t.slot_values) for t in user_turns] == [
        (text, [{"slot": "restaurant-name", "value": value}] if value else []) for text, value in said
    ]
    assert [item.payload for item in job.items.order_by("position")] == [
        {"utterance": text, "slot_values": [value] if value else []} for text, value in said
    ]


# -- malformed files: refused with the place and the reason, nothing written ---------------------
def _multiwoz(tmp_path, dialogs, name="data.json"):
    path = tmp_path / name
    path.write_text(json.dumps(dialogs))
    return {"data": path}


def _good_multiwoz_dialog():
    return multiwoz_source()["SNG90001.json"]


def _without_text(tmp_path):
    broken = _good_multiwoz_dialog()
    del broken["log"][3]["text"]
    return _multiwoz(tmp_path, {"SNG90001.json": _good_multiwoz_dialog(), "PMUL4398.json": broken})


def _user_turn_with_belief_state(tmp_path):
    broken = _good_multiwoz_dialog()
    broken["log"][2]["metadata"] = broken["log"][1]["metadata"]
    return _multiwoz(tmp_path, {"SNG90001.json": _good_multiwoz_dialog(), "MUL0002.json": broken})


def _bad_span_info(tmp_path):
    broken = _good_multiwoz_dialog()
    broken["log"][2]["span_info"][0] = ["Restaurant-Inform", "People"]
    return _multiwoz(tmp_path, {"SNG90001.json": _good_multiwoz_dialog(), "MUL0003.json": broken})


def _multiwoz_bad_json(tmp_path):
    good = json.dumps(_good_multiwoz_dialog())
    path = tmp_path / "data.json"
    path.write_text('{"SNG90001.json": ' + good + ' "SNG90002.json": ' + good + "}")
    return {"data": path}


def _multiwoz_truncated(tmp_path):
    second = json.dumps(_good_multiwoz_dialog(), indent=1).splitlines()
    lines = ["{", f'"SNG90001.json": {json.dumps(_good_multiwoz_dialog())},', f'"SNG90002.json": {second[0]}', *second[1:8]]
    path = tmp_path / "data.json"
    path.write_text("\n".join(lines) + "\n")  # 10 lines, cut inside the second dialog
    return {"data": path}


def _multiwoz_latin1(tmp_path):
    good = json.dumps(_good_multiwoz_dialog(), ensure_ascii=False)
    latin1 = good.replace("Lotus Corner is", "Caf\u00e9 Lotus is").encode("latin-1")
    path = tmp_path / "data.json"
    path.write_bytes(b'{\n"SNG90001.json": ' + good.encode() + b',\n"SNG90002.json": ' + latin1 + b"\n}\n")
    return {"data": path}


def _multiwoz_list(tmp_path):
    return _multiwoz(tmp_path, [_good_multiwoz_dialog()])


def _multiwoz_empty(tmp_path):
    return _multiwoz(tmp_path, {})


def _dstc9(tmp_path, logs, labels=None):
    files = {"data": tmp_path / "logs.json"}
    files["data"].write_text(json.dumps(logs))
    if labels is not None:
        files["labels"] = tmp_path / "labels.json"
        files["labels"].write_text(json.dumps(labels))
    return files


def _dstc9_logs():
    return json.loads((DSTC9 / "logs.json").read_text())


def _dstc9_short_labels(tmp_path):
    return _dstc9(tmp_path, _dstc9_logs(), [{"target": False}])


def _dstc9_long_labels(tmp_path):
    return _dstc9(tmp_path, _dstc9_logs(), [{"target": False}] * 3)


def _dstc9_bad_speaker(tmp_path):
    logs = _dstc9_logs()
    logs[1][0]["speaker"] = "A"
    return _dstc9(tmp_path, logs)


def _dstc9_object(tmp_path):
    return _dstc9(tmp_path, {"0": _dstc9_logs()[0]})


def _dstc9_bad_knowledge(tmp_path):
    files = _dstc9(tmp_path, _dstc9_logs())
    files["knowledge"] = tmp_path / "knowledge.json"
    files["knowledge"].write_text('{\n  "hotel": {\n    "7": {"docs": {}},\n  }\n}')
    return files


def _dstc6(tmp_path, dialogs):
    path = tmp_path / "dstc6.json"
    path.write_text(json.dumps(dialogs))
    return {"data": path}


def _dstc6_no_utterances(tmp_path):
    good = json.loads(DSTC6.read_text())[0]
    broken = {"dialog_id": "t1-0002", "candidates": []}
    return _dstc6(tmp_path, [good, broken])


def _dstc6_bad_json(tmp_path):
    good = json.dumps(json.loads(DSTC6.read_text())[0])
    path = tmp_path / "dstc6.json"
    path.write_text(f'[\n{good},\n{{"dialog_id": "t1-0002",\n  "utterances": ["hi", ],\n  "candidates": []}}\n]')
    return {"data": path}


def _dstc6_utterance_not_text(tmp_path):
    good = json.loads(DSTC6.read_text())[0]
    return _dstc6(tmp_path, [{**good, "utterances": ["hello", 7]}])


def _dstc6_duplicate_id(tmp_path):
    good = json.loads(DSTC6.read_text())[0]
    return _dstc6(tmp_path, [good, good])


def _dstc6_object(tmp_path):
    return _dstc6(tmp_path, json.loads(DSTC6.read_text())[0])


def _jsonl(tmp_path, lines):
    path = tmp_path / "corpus.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return {"data": path}


def _jsonl_lines():
    return JSONL.read_text().splitlines()  # dialogs on lines 1 and 3, line 2 blank


def _jsonl_bad_json(tmp_path):
    return _jsonl(tmp_path, _jsonl_lines() + ['{"dialog_id": "q-003" "turns": []}'])


def _jsonl_value_not_in_text(tmp_path):
    dialog = {"dialog_id": "q-003", "turns": [{"speaker": "user", "text": "A Thai place", "slot_values": [{"slot": "food", "value": "thai"}]}]}
    return _jsonl(tmp_path, _jsonl_lines() + [json.dumps(dialog)])


def _jsonl_missing_speaker(tmp_path):
    dialog = {"dialog_id": "q-003", "turns": [{"text": "Hello"}]}
    return _jsonl(tmp_path, [*_jsonl_lines(), "", json.dumps(dialog)])


def _jsonl_unknown_key(tmp_path):
    dialog = {"dialog_id": "q-003", "turns": [{"speaker": "user", "text": "A Thai place", "slot_value": [{"slot": "food", "value": "Thai"}]}]}
    return _jsonl(tmp_path, _jsonl_lines() + [json.dumps(dialog)])


def _jsonl_duplicate_id(tmp_path):
    lines = _jsonl_lines()
    return _jsonl(tmp_path, [*lines, lines[0]])


def _jsonl_pretty_printed(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text(json.dumps([json.loads(_jsonl_lines()[0])], indent=2))
    return {"data": path}


def _jsonl_latin1(tmp_path):
    path = tmp_path / "corpus.jsonl"
    lines = [*_jsonl_lines(), json.dumps({"dialog_id": "q-003", "turns": [{"speaker": "user", "text": "Caf\u00e9?"}]}, ensure_ascii=False)]
    path.write_bytes(("\n".join(lines) + "\n").encode("latin-1"))
    return {"data": path}


def _jsonl_blank(tmp_path):
    return _jsonl(tmp_path, ["", "  "])


MALFORMED = {
    "multiwoz text missing": ("multiwoz", _without_text, 'data.json: dialog "PMUL4398.json", turn 4 (log[3]): "text" is missing'),
    "multiwoz alternation": ("multiwoz", _user_turn_with_belief_state, 'data.json: dialog "MUL0002.json", turn 3 (log[2]): turns at even places of the log (log[0], log[2], ...) are user turns'),
    "multiwoz span_info": ("multiwoz", _bad_span_info, 'data.json: dialog "MUL0003.json", turn 3 (log[2]): a "span_info" entry must be'),
    "multiwoz bad JSON": ("multiwoz", _multiwoz_bad_json, "data.json line 1, column "),
    "multiwoz bad JSON item": ("multiwoz", _multiwoz_bad_json, 'after dialog "SNG90001.json"'),
    "multiwoz truncated": ("multiwoz", _multiwoz_truncated, 'data.json line 11, column 1 (in dialog "SNG90002.json"): not valid JSON (the file ends in the middle of a value: is it complete?)'),
    "multiwoz not UTF-8": ("multiwoz", _multiwoz_latin1, "data.json line 3: not UTF-8 text"),
    "multiwoz top-level list": ("multiwoz", _multiwoz_list, "data.json: expected a MultiWOZ data.json"),
    "multiwoz empty": ("multiwoz", _multiwoz_empty, "data.json: no dialogs found"),
    "dstc9 labels too short": ("dstc9", _dstc9_short_labels, "labels.json: has 1 entries but logs.json has 2 instances"),
    "dstc9 labels too long": ("dstc9", _dstc9_long_labels, "labels.json: has 3 entries but logs.json has 2 instances"),
    "dstc9 speaker": ("dstc9", _dstc9_bad_speaker, 'logs.json: instance 1, turn 1 (instance[0]): "speaker" must be "U" or "S"'),
    "dstc9 top-level object": ("dstc9", _dstc9_object, "logs.json: expected a DSTC9 logs.json"),
    "dstc9 knowledge bad JSON": ("dstc9", _dstc9_bad_knowledge, "knowledge.json line 4: not valid JSON"),
    "dstc6 utterances missing": ("dstc6", _dstc6_no_utterances, 'dstc6.json: dialog "t1-0002" (index 1): "utterances" is missing'),
    "dstc6 utterance not text": ("dstc6", _dstc6_utterance_not_text, "(index 0), utterance 2 (utterances[1]): must be a string, not a number"),
    "dstc6 duplicate id": ("dstc6", _dstc6_duplicate_id, "dialog id 't1-0001' appears more than once"),
    "dstc6 bad JSON": ("dstc6", _dstc6_bad_json, 'dstc6.json line 4, column 24 (in dialog 1): not valid JSON (Expecting value)'),
    "dstc6 top-level object": ("dstc6", _dstc6_object, "dstc6.json: expected a DSTC6 Track 1 file"),
    "jsonl bad JSON": ("jsonl", _jsonl_bad_json, "corpus.jsonl line 4: not valid JSON (Expecting ',' delimiter)"),
    "jsonl value not in text": ("jsonl", _jsonl_value_not_in_text, 'corpus.jsonl line 4, turn 1 (turns[0]): the value "thai" of slot "food" does not occur in the text'),
    "jsonl speaker missing": ("jsonl", _jsonl_missing_speaker, 'corpus.jsonl line 5, turn 1 (turns[0]): "speaker" is missing'),
    "jsonl unknown key": ("jsonl", _jsonl_unknown_key, 'corpus.jsonl line 4, turn 1 (turns[0]): unknown key "slot_value"'),
    "jsonl duplicate id": ("jsonl", _jsonl_duplicate_id, "corpus.jsonl line 4: the dialog id 'q-001' appears more than once"),
    "jsonl pretty-printed": ("jsonl", _jsonl_pretty_printed, "corpus.jsonl line 1: not valid JSON"),
    "jsonl not UTF-8": ("jsonl", _jsonl_latin1, "corpus.jsonl line 4: not UTF-8 text"),
    "jsonl only blank lines": ("jsonl", _jsonl_blank, "corpus.jsonl: no dialogs found"),
}


@pytest.mark.parametrize("case", MALFORMED)
def test_malformed_file_is_refused_with_its_place_and_nothing_is_written(case, tmp_path, monkeypatch):
    source_format, make_files, expected = MALFORMED[case]
    import_corpus(name="already there", source_format="multiwoz", files={"data": MULTIWOZ})
    # One dialog per batch: the good dialogs before the bad one are written before it is found.
    monkeypatch.setattr(imports, "BATCH_DIALOGS", 1)
    files = make_files(tmp_path)
    before = counts()

    with pytest.raises(ImportFailed) as refused:
        import_corpus(name="broken", source_format=source_format, files=files)

    assert expected in str(refused.value)
    assert counts() == before
    assert not Corpus.objects.filter(name="broken").exists()


def test_a_taken_name_is_refused():
    import_corpus(name="restaurants", source_format="multiwoz", files={"data": MULTIWOZ})
    before = counts()
    with pytest.raises(ImportFailed, match='A corpus named "restaurants" already exists'):
        import_corpus(name="restaurants", source_format="dstc6", files={"data": DSTC6})
    assert counts() == before


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"source_format": "convlab", "files": {"data": MULTIWOZ}}, 'Unknown format "convlab"'),
        ({"source_format": "multiwoz", "files": {"data": Path("/nonexistent/data.json")}}, "The data file data.json does not exist"),
        ({"source_format": "multiwoz", "files": {"data": MULTIWOZ, "labels": DSTC9 / "labels.json"}}, "takes no labels file"),
        ({"source_format": "dstc9", "files": {"labels": DSTC9 / "labels.json"}}, "the data file is required"),
    ],
)
def test_requests_that_cannot_be_imported_are_refused_before_reading(kwargs, message):
    with pytest.raises(ImportFailed, match=message):
        import_corpus(name="x", **kwargs)
    with pytest.raises(ImportFailed, match=message):
        start_import(name="x", **kwargs)
    assert counts() == (0, 0, 0)
    assert not ImportRun.objects.exists()


def test_progress_is_reported_per_batch_up_to_the_file_size(tmp_path, monkeypatch):
    monkeypatch.setattr(imports, "BATCH_DIALOGS", 10)
    dialog = _good_multiwoz_dialog()
    files = _multiwoz(tmp_path, {f"SNG{i:05d}.json": dialog for i in range(60)})  # ~200 kB: several parser buffers
    calls = []
    import_corpus(name="sixty", source_format="multiwoz", files=files, progress=lambda done, total: calls.append((done, total)))

    size = files["data"].stat().st_size
    assert len(calls) >= 3
    assert calls[0] == (0, size)
    assert all(total == size for _, total in calls)
    dones = [done for done, _ in calls]
    assert dones == sorted(set(dones))  # growing, each figure reported once
    assert calls[-1] == (size, size)


# -- the command -----------------------------------------------------------------------------------
def test_command_imports_and_prints_a_summary(capsys):
    call_command("import_corpus", "restaurants", str(MULTIWOZ), "--format", "multiwoz")

    out = capsys.readouterr().out
    assert 'Imported corpus "restaurants"' in out
    assert "1 dialogs, 6 turns (3 user turns), 6 slot values" in out
    assert Corpus.objects.get(name="restaurants").dialogs.count() == 1


def test_command_prints_progress_to_stderr_for_big_files(capsys, monkeypatch):
    from annotation.management.commands import import_corpus as command

    monkeypatch.setattr(command, "PROGRESS_FROM_BYTES", MULTIWOZ.stat().st_size)  # the sample counts as big
    call_command("import_corpus", "restaurants", str(MULTIWOZ), "--format", "multiwoz")

    captured = capsys.readouterr()
    assert "read 100%" in captured.err
    assert "read" not in captured.out


def test_command_takes_dstc9_labels_and_knowledge(capsys):
    call_command(
        "import_corpus", "kg", str(DSTC9 / "logs.json"), "--format", "dstc9",
        "--labels", str(DSTC9 / "labels.json"), "--knowledge", str(DSTC9 / "knowledge.json"),
    )
    corpus = Corpus.objects.get(name="kg")
    assert "knowledge" in corpus.meta
    assert corpus.dialogs.get(external_id="0").meta["label"]["target"] is True


def test_command_failure_is_a_command_error_with_the_reason(tmp_path):
    files = _without_text(tmp_path)
    with pytest.raises(CommandError, match=re.escape('dialog "PMUL4398.json", turn 4 (log[3]): "text" is missing')):
        call_command("import_corpus", "broken", str(files["data"]), "--format", "multiwoz")
    assert counts() == (0, 0, 0)


# -- the queued import -------------------------------------------------------------------------
def test_start_import_runs_the_task_on_commit_and_fills_the_run(organizer, tmp_path, django_capture_on_commit_callbacks):
    data = tmp_path / "data.json"
    shutil.copy(MULTIWOZ, data)
    with django_capture_on_commit_callbacks(execute=True):
        run = start_import(name="queued", source_format="multiwoz", files={"data": data}, created_by=organizer)
        assert ImportRun.objects.get(pk=run.pk).status == RunStatus.PENDING

    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.corpus.name == "queued"
    assert run.corpus.created_by == organizer
    assert run.done == run.total == data.stat().st_size
    assert run.progress == 1.0
    assert run.started_at and run.finished_at and run.error == ""


def test_a_refused_file_fails_the_run_with_the_reason(tmp_path, django_capture_on_commit_callbacks):
    files = _without_text(tmp_path)
    with django_capture_on_commit_callbacks(execute=True):
        run = start_import(name="broken", source_format="multiwoz", files=files)

    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert 'dialog "PMUL4398.json", turn 4 (log[3]): "text" is missing' in run.error
    assert run.corpus is None and run.finished_at is not None
    assert run.total == files["data"].stat().st_size  # the progress figures stay on the failed run
    assert counts() == (0, 0, 0)


def test_an_import_that_cannot_be_queued_fails_its_run_with_the_reason(monkeypatch, django_capture_on_commit_callbacks):
    def broker_down(*args, **kwargs):
        raise ConnectionError("broker unreachable")

    monkeypatch.setattr(run_import, "delay", broker_down)
    with django_capture_on_commit_callbacks(execute=True):
        run = start_import(name="unqueued", source_format="multiwoz", files={"data": MULTIWOZ})
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and run.finished_at
    assert run.error == "The import could not be queued (ConnectionError); nothing was imported. Try again later."
    assert not Corpus.objects.exists()


def test_start_import_refuses_a_taken_name_and_a_name_being_imported(tmp_path):
    import_corpus(name="taken", source_format="multiwoz", files={"data": MULTIWOZ})
    with pytest.raises(ImportFailed, match="already exists"):
        start_import(name="taken", source_format="multiwoz", files={"data": MULTIWOZ})
    start_import(name="pending", source_format="multiwoz", files={"data": MULTIWOZ})  # on_commit never fires here
    with pytest.raises(ImportFailed, match="already being imported"):
        start_import(name="pending", source_format="multiwoz", files={"data": MULTIWOZ})
    assert ImportRun.objects.count() == 1


def test_run_import_is_safe_to_deliver_again():
    run = ImportRun.objects.create(corpus_name="twice", source_format="multiwoz", files={"data": str(MULTIWOZ)})
    run_import(run.pk)
    run_import(run.pk)  # a second delivery of a finished run does nothing
    assert Corpus.objects.filter(name="twice").count() == 1
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED

    # A run left "running" by a worker that died is started again (its transaction rolled back).
    again = ImportRun.objects.create(corpus_name="again", source_format="dstc6", files={"data": str(DSTC6)}, status=RunStatus.RUNNING)
    run_import(again.pk)
    again.refresh_from_db()
    assert again.status == RunStatus.SUCCEEDED and again.corpus.name == "again"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_progress_is_visible_to_other_connections_during_the_import_transaction():
    run = ImportRun.objects.create(corpus_name="watched", source_format="multiwoz", files={"data": str(MULTIWOZ)})
    progress = imports.RunProgress(run)
    watcher = connections.create_connection("default")
    try:
        with transaction.atomic():
            Corpus.objects.create(name="uncommitted", source_format="multiwoz")
            progress(400, 1000)
            with watcher.cursor() as cursor:
                cursor.execute(f"SELECT done, total FROM {ImportRun._meta.db_table} WHERE id = %s", [run.pk])
                assert cursor.fetchone() == (400, 1000)
                cursor.execute(f"SELECT count(*) FROM {Corpus._meta.db_table}")
                assert cursor.fetchone() == (0,)  # the import's own writes are still invisible
    finally:
        progress.close()
        watcher.close()
