"""Each test set's README says what its own format holds: the README of a JSONL export spoke of
MultiWOZ `span_info`, which JSONL does not have, and DSTC9/DSTC6 READMEs of slot values they do not carry."""
import pytest

from annotation import task_types
from annotation.exporters.readme import render


def _readme(task_type: str, source_format: str, settings=None) -> str:
    kind = task_types.get(task_type)
    settings = kind.clean_settings(settings or {})
    manifest = {
        "job": {"id": 1, "name": "j"}, "corpus": {"name": "c", "source_format": source_format}, "exported_at": "now",
        "quorum_version": "x",
        "variants": {name: {"turns_replaced": 1, "turns_without_accepted_rewrite": 0} for name in kind.test_set_names(settings)},
    }
    return render(manifest=manifest, files=[], columns=kind.response_column_help(settings), words=kind.test_set_words(settings))


@pytest.mark.parametrize("source_format", ["jsonl", "dstc9", "dstc6"])
def test_a_rewrite_readme_names_no_multiwoz_field_outside_multiwoz(source_format):
    readme = _readme("rewrite", source_format)
    assert "span_info" not in readme and "dialog_act" not in readme and "MultiWOZ" not in readme


def test_slot_values_are_spoken_of_only_where_the_format_has_them():
    assert "slot values" in _readme("rewrite", "jsonl")
    assert "span_info" in _readme("rewrite", "multiwoz") and "slot values" in _readme("rewrite", "multiwoz")
    for source_format in ("dstc9", "dstc6"):
        assert "slot value" not in _readme("rewrite", source_format)


@pytest.mark.parametrize(("source_format", "label", "others"), [
    ("multiwoz", "general-oos", ("oos_turns", "logs.json")),
    ("jsonl", '`"oos": true`', ("general-oos", "metadata", "oos_turns", "MultiWOZ")),
    ("dstc9", "logs.json", ("general-oos", "metadata", "oos_turns", "MultiWOZ")),
    ("dstc6", "oos_turns", ("general-oos", "metadata", "MultiWOZ")),
])
def test_an_out_of_scope_readme_gives_its_own_format_s_label_only(source_format, label, others):
    readme = _readme("oos_insert", source_format)
    assert label in readme
    assert not [other for other in others if other in readme]
