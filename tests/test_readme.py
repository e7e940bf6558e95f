"""The README's configuration table stays a table (issue 10: a stray row once broke it)."""
import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
# A cell boundary is a pipe that is not escaped (`\|` stays inside a cell).
CELL = re.compile(r"(?<!\\)\|")


def test_the_configuration_table_has_three_cells_on_every_row_and_no_stray_line():
    text = README.read_text(encoding="utf-8")
    section = text.split("### Configuration (environment variables)", 1)[1].split("\n\n`quorum/settings.py`", 1)[0]
    lines = section.strip().splitlines()
    assert lines[0] == "| variable | default | meaning |" and lines[1] == "|---|---|---|"
    for line in lines[2:]:
        assert line.startswith("| `") and line.endswith("|"), line
        assert len(CELL.split(line)) == 5, line  # | a | b | c |: three cells between four pipes
