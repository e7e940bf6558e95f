"""`manage.py check_rewrites FILE` and the pure audit module behind it."""
import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.quality.rewrite_audit import audit_line

SOURCE = "I need a cheap restaurant in the centre for 4 people."


def line(**fields):
    return json.dumps({"source": SOURCE, "slot_values": ["cheap", "centre", "4 people"], **fields})


def test_a_good_rewrite_passes():
    verdict = audit_line(1, line(variant="paraphrase", rewrite="Find me a cheap place to eat in the centre for 4 people."))
    assert verdict.verdict == "PASS" and verdict.reasons == []


def test_a_missing_slot_value_fails_with_the_value_named():
    verdict = audit_line(1, line(variant="paraphrase", rewrite="Find me an inexpensive place in the centre for 4 people."))
    assert verdict.verdict == "FAIL"
    assert verdict.codes == ["slot_value_missing"] and '"cheap"' in verdict.reasons[0]


def test_slot_values_in_turn_shape_are_understood():
    text = json.dumps({"source": SOURCE, "slot_values": [{"slot": "area", "value": "centre"}], "variant": "simplified", "rewrite": "cheap food centre"})
    assert audit_line(1, text).verdict == "PASS"


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("{not json", "not valid JSON"),
        (json.dumps(["a list"]), "JSON object"),
        (json.dumps({"source": SOURCE, "variant": "paraphrase"}), "'rewrite'"),
        (line(variant="sarcastic", rewrite="x"), "not one of"),
        (json.dumps({"source": SOURCE, "slot_values": "cheap", "variant": "typos", "rewrite": "x"}), "must be a list"),
    ],
)
def test_unreadable_lines_say_what_to_fix(text, fragment):
    verdict = audit_line(7, text)
    assert verdict.verdict == "ERROR" and fragment in verdict.reasons[0] and verdict.line == 7


def test_slots_instead_of_slot_values_is_named_with_the_accepted_fields(tmp_path, capsys):
    """The reported case: "slots" was ignored, so a rewrite that dropped every value passed."""
    text = json.dumps({"source": SOURCE, "slots": ["cheap", "centre"], "variant": "paraphrase", "rewrite": "Find me food."})
    verdict = audit_line(3, text)
    assert verdict.verdict == "ERROR" and verdict.codes == ["unknown_field"]
    assert verdict.reasons == ["unknown field 'slots'; the accepted fields are source, slot_values, variant, rewrite"]
    path = tmp_path / "rewrites.jsonl"
    path.write_text(text + "\n", encoding="utf-8")
    with pytest.raises(SystemExit) as exit_code:
        call_command("check_rewrites", str(path))
    assert exit_code.value.code == 2 and "line 1: ERROR - unknown field 'slots'" in capsys.readouterr().out


def test_command_prints_a_verdict_per_line_and_exits_with_the_worst(tmp_path):
    path = tmp_path / "rewrites.jsonl"
    path.write_text(
        "\n".join(
            [
                line(variant="verbose", rewrite="Hello, I was wondering if I need a cheap restaurant in the centre for 4 people."),
                line(variant="simplified", rewrite=SOURCE),
                "",
                line(variant="typos", rewrite="I need a cheep restaurant in the centre for 4 people."),
            ]
        ),
        encoding="utf-8",
    )
    out, err = StringIO(), StringIO()
    with pytest.raises(SystemExit) as exc:
        call_command("check_rewrites", str(path), stdout=out, stderr=err)
    assert exc.value.code == 1
    lines = out.getvalue().splitlines()
    assert lines[0] == "line 1: PASS"
    assert lines[1].startswith("line 2: FAIL") and "same as the original" in lines[1]
    assert lines[2].startswith("line 4: FAIL") and "cheap" in lines[2]  # the typo hit the slot value
    assert "3 rewrite(s): 1 pass, 2 fail, 0 unreadable" in err.getvalue()


def test_command_json_output_and_a_clean_file_exit_zero(tmp_path):
    path = tmp_path / "ok.jsonl"
    path.write_text(line(variant="paraphrase", rewrite="Find me a cheap place to eat in the centre for 4 people.") + "\n")
    out = StringIO()
    call_command("check_rewrites", str(path), "--json", stdout=out, stderr=StringIO())
    assert json.loads(out.getvalue()) == {"line": 1, "verdict": "PASS", "reasons": [], "codes": []}


def test_command_refuses_a_missing_file(tmp_path):
    with pytest.raises(CommandError, match="Cannot read"):
        call_command("check_rewrites", str(tmp_path / "nope.jsonl"))
