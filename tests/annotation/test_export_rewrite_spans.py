"""A rewrite job's MultiWOZ test sets: `span_info` of a rewritten turn gives each value's place in
the rewrite, in the unit the corpus counted (tokens in MultiWOZ 2.1, characters in a Chinese
corpus), and a span whose value the rewrite lacks is left out and counted, never written wrong.

Found by a CGoDial builder: the spans of rewritten turns still gave places in the original text.
"""
import json

import pytest

from annotation.exporters.spans import move_spans
from annotation.importers.base import locate
from annotation.models import Turn
from annotation.services.exports import export_job
from annotation.services.imports import import_corpus
from annotation.services.jobs import create_job
from tests.annotation.test_exports import read_json, respond

pytestmark = pytest.mark.django_db

SYSTEM = {"restaurant": {"book": {"booked": [], "people": ""}, "semi": {"food": "", "area": ""}}}


def _corpus(tmp_path, name, user_turns):
    """A MultiWOZ corpus of one dialog: each (text, span_info) a user turn, with a system turn after it."""
    log = []
    for text, spans in user_turns:
        acts: dict = {}
        for act, slot, value, *_ in spans:
            acts.setdefault(act, []).append([slot, value])
        log += [{"text": text, "metadata": {}, "dialog_act": acts, "span_info": spans},
                {"text": "好的。" if name == "zh" else "Okay .", "metadata": SYSTEM, "dialog_act": {}, "span_info": []}]
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"D1.json": {"goal": {}, "log": log}}, ensure_ascii=False), encoding="utf-8")
    return import_corpus(name=name, source_format="multiwoz", files={"data": path})


def _export(tmp_path, corpus, rewrites, **respond_options):
    """Export a paraphrase job whose item i has the accepted paraphrase rewrites[i]."""
    job = create_job(corpus=corpus, name="spans", task_type="rewrite", settings={"variants": ["paraphrase"]})
    for item, text in zip(job.items.order_by("position"), rewrites, strict=True):
        respond(item, f"w{item.position}", answers={"paraphrase": text}, **respond_options)
    out = tmp_path / f"export-{corpus.name}"
    export_job(job, out)
    return out, read_json(out / "paraphrase" / "data.json")["D1.json"]["log"]


def _at(text, span, unit):
    """The text a span points at: tokens by spaces, or characters; end inclusive."""
    if unit == "characters":
        return text[span[3]:span[4] + 1]
    return " ".join(text.split()[span[3]:span[4] + 1])


def test_a_tokenised_corpus_gets_token_positions_in_the_rewrite(tmp_path):
    source = "I need to book a hotel in the east that has 4 stars ."
    spans = [["Hotel-Inform", "Area", "east", 8, 8], ["Hotel-Inform", "Stars", "4", 11, 11]]
    corpus = _corpus(tmp_path, "en", [(source, spans)])
    rewrite = "Could you find me a 4-star place, in the east?"

    out, log = _export(tmp_path, corpus, [rewrite])

    assert log[0]["text"] == rewrite
    # Counted as the corpus counts, in tokens ("4-star", "place", ",", "in", "the", "east", "?"), end inclusive.
    assert log[0]["span_info"] == [["Hotel-Inform", "Area", "east", 10, 10], ["Hotel-Inform", "Stars", "4", 5, 5]]
    assert log[0]["dialog_act"] == {"Hotel-Inform": [["Area", "east"], ["Stars", "4"]]}
    manifest = read_json(out / "manifest.json")
    assert manifest["variants"]["paraphrase"]["span_info_dropped"] == 0
    assert manifest["variants"]["paraphrase"]["span_info_moved"] == 2
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert "span_info` of changed turns: 2 spans placed in the new text, 0 left out" in readme
    assert "may not match" not in readme


def test_a_chinese_corpus_gets_character_positions_in_the_rewrite(tmp_path):
    source = "你好，我想订北京饭店，三个人，明天晚上七点。"
    spans = [["Restaurant-Inform", "Name", "北京饭店", 6, 9], ["Restaurant-Inform", "People", "三个人", 11, 13],
             ["Restaurant-Inform", "Time", "明天晚上七点", 15, 20]]
    corpus = _corpus(tmp_path, "zh", [(source, spans)])
    rewrite = "明天晚上七点，我们三个人想去北京饭店吃饭，能订吗？"

    out, log = _export(tmp_path, corpus, [rewrite])

    moved = log[0]["span_info"]
    assert [_at(rewrite, span, "characters") for span in moved] == ["北京饭店", "三个人", "明天晚上七点"]
    assert [span[3:] for span in moved] == [[14, 17], [9, 11], [0, 5]]
    # The export imports again with the same values, from the new places.
    again = import_corpus(name="zh-again", source_format="multiwoz", files={"data": out / "paraphrase" / "data.json"})
    turn = Turn.objects.get(dialog__corpus=again, index=0)
    assert {v["value"] for v in turn.slot_values} == {"北京饭店", "三个人", "明天晚上七点"}


def test_a_value_the_rewrite_lacks_loses_its_span_and_is_counted(tmp_path):
    """A rewrite voted down for losing a value and accepted by a reviewer after all."""
    source = "I want a cheap place in the centre ."
    spans = [["Restaurant-Inform", "Price", "cheap", 3, 3], ["Restaurant-Inform", "Area", "centre", 7, 7]]
    corpus = _corpus(tmp_path, "lost", [(source, spans)])

    out, log = _export(tmp_path, corpus, ["Somewhere central that is cheap, please."], checks={"voted_down_parts": ["paraphrase"]})

    assert log[0]["span_info"] == [["Restaurant-Inform", "Price", "cheap", 4, 4]]
    assert read_json(out / "manifest.json")["variants"]["paraphrase"]["span_info_dropped"] == 1
    assert "1 left out because the new text does not hold their value" in (out / "README.md").read_text(encoding="utf-8")


def test_untouched_turns_keep_their_spans_as_imported(tmp_path):
    first, second = "A cheap place in the centre .", "Thai food , please ."
    corpus = _corpus(tmp_path, "kept", [
        (first, [["Restaurant-Inform", "Price", "cheap", 1, 1]]),
        (second, [["Restaurant-Inform", "Food", "thai", 0, 0]]),
    ])
    job = create_job(corpus=corpus, name="spans", task_type="rewrite", settings={"variants": ["paraphrase"]})
    respond(job.items.get(position=0), "w", answers={"paraphrase": "In the centre, something cheap."})
    out = tmp_path / "out"
    export_job(job, out)
    log = read_json(out / "paraphrase" / "data.json")["D1.json"]["log"]
    assert log[0]["span_info"] == [["Restaurant-Inform", "Price", "cheap", 5, 5]]
    assert log[2]["span_info"] == [["Restaurant-Inform", "Food", "thai", 0, 0]]  # no accepted rewrite: as imported


def test_spans_follow_the_unit_and_the_end_the_source_counted_in():
    # Untokenised text counted by spaces ("centre," one word) stays counted by spaces.
    spaced = move_spans([["R", "Area", "centre", 6, 6]], "Hi, a cheap place in the centre, please.", "The centre, cheap.")
    assert spaced.spans == [["R", "Area", "centre", 1, 1]] and spaced.dropped == 0
    # Characters with an exclusive end stay exclusive.
    exclusive = move_spans([["R", "Name", "北京饭店", 6, 10]], "你好，我想订北京饭店。", "订北京饭店")
    assert exclusive.spans == [["R", "Name", "北京饭店", 1, 5]]
    # A value is found by the importer's rule: not inside a longer number.
    assert move_spans([["R", "People", "三个人", 0, 2]], "三个人。", "我们十三个人").dropped == 1
    assert locate("我们十三个人", "我们十三个人", "三个人") is None
    # Unseen entities: the span names the new value at its place.
    renamed = move_spans([["R", "Price", "cheap", 1, 1]], "A cheap place .", "An expensive place .", {"cheap": "expensive"})
    assert renamed.spans == [["R", "Price", "expensive", 1, 1]]
