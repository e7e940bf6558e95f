"""Slot values of a Chinese corpus in MultiWOZ form, written without spaces between words.

Found walking Quorum with a Chinese restaurant and hotel corpus: the import kept a value from
dialog_act (or from span_info counted in characters) only where punctuation stood beside it, so
"北京饭店" in "我想订北京饭店", and every value of "帮我找一家在朝阳区的便宜川菜馆", was dropped
without a word, and the rewrite checks then let rewrites lose those values.
"""
import json

import pytest

from annotation.importers.base import locate
from annotation.models import Turn
from annotation.services.imports import import_corpus
from annotation.text.rewrite_checks import check_rewrite


def test_locate_finds_chinese_values_between_chinese_characters():
    text = "帮我找一家在朝阳区的便宜川菜馆。"
    assert [locate(text, text.lower(), v) for v in ("朝阳区", "便宜", "川菜")] == ["朝阳区", "便宜", "川菜"]
    text = "我们十三个人，要三个人的桌子"
    assert locate(text, text.lower(), "三个人") == "三个人"
    assert locate("我们十三个人", "我们十三个人", "三个人") is None
    assert locate("the least one", "the least one", "east") is None


@pytest.mark.django_db
def test_a_chinese_multiwoz_corpus_keeps_its_dialog_act_values(tmp_path):
    user = "帮我找一家在朝阳区的便宜川菜馆。"
    booking = "你好，我想订北京饭店，三个人，明天晚上七点。"
    system = {"restaurant": {"book": {"booked": [], "people": ""}, "semi": {"food": "", "area": ""}}}
    data = {
        "ZH1.json": {"goal": {}, "log": [
            {"text": user, "metadata": {},
             "dialog_act": {"Restaurant-Inform": [["Area", "朝阳区"], ["Price", "便宜"], ["Food", "川菜"]]}},
            {"text": "推荐您去蜀香园。", "metadata": system},
            # span_info counted in characters, as unsegmented Chinese corpora do: no word is there.
            {"text": booking, "metadata": {},
             "dialog_act": {"Restaurant-Inform": [["Name", "北京饭店"], ["People", "三个人"], ["Time", "明天晚上七点"]]},
             "span_info": [["Restaurant-Inform", "Name", "北京饭店", 6, 9],
                           ["Restaurant-Inform", "People", "三个人", 11, 13],
                           ["Restaurant-Inform", "Time", "明天晚上七点", 15, 20]]},
            {"text": "好的，已为您预订。", "metadata": system},
        ]},
    }
    path = tmp_path / "data.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    corpus = import_corpus(name="zh", source_format="multiwoz", files={"data": path})

    turns = list(Turn.objects.filter(dialog__corpus=corpus, speaker="user").order_by("index"))
    assert turns[0].slot_values == [
        {"slot": "restaurant-area", "value": "朝阳区"},
        {"slot": "restaurant-price", "value": "便宜"},
        {"slot": "restaurant-food", "value": "川菜"},
    ]
    assert {v["value"] for v in turns[1].slot_values} == {"北京饭店", "三个人", "明天晚上七点"}
    for turn in turns:  # the source passes its own check, as it must
        assert check_rewrite("paraphrase", turn.text, turn.text + "谢谢", [v["value"] for v in turn.slot_values]) == []
