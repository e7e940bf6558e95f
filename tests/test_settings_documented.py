"""The README's configuration table and quorum/settings.py agree: every variable the settings read
is in the table's first column, and every variable the table documents there is read. A variable
read and documented nowhere (STATIC_ROOT, the MTurk rates) was a setting an operator could not
find; one read and used nowhere (QUORUM_CLAIM_TIMEOUT_MINUTES: each job has its own claim timeout)
was a setting that did nothing."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# env.int("NAME", ...), env.db("DATABASE_URL", ...), also across a line break after the parenthesis.
READ = re.compile(r'\benv(?:\.\w+)?\(\s*"([A-Z][A-Z0-9_]*)"')
CELL = re.compile(r"(?<!\\)\|")


def _read_by_settings() -> set[str]:
    return set(READ.findall((ROOT / "quorum" / "settings.py").read_text(encoding="utf-8")))


def _documented() -> set[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("### Configuration (environment variables)", 1)[1].split("\n\n`quorum/settings.py`", 1)[0]
    names: set[str] = set()
    for line in section.strip().splitlines()[2:]:
        names |= set(re.findall(r"`([A-Z][A-Z0-9_]*)`", CELL.split(line)[1]))
    return names


def test_every_variable_the_settings_read_is_in_the_readme_table():
    assert sorted(_read_by_settings() - _documented()) == []


def test_every_variable_the_readme_table_documents_is_read():
    assert sorted(_documented() - _read_by_settings()) == []


def test_the_pattern_finds_the_settings_reads():
    found = _read_by_settings()
    assert {"DATABASE_URL", "CACHE_URL", "QUORUM_SESSION_ENGINE", "QUORUM_AUDIO_S3_BUCKET", "SECRET_KEY"} <= found
