"""Malformed corpora generated per format: each is refused with the file, the place and the reason,
by the service, the command (a CommandError) and an upload (a failed run); nothing is written and no
uploaded file stays on disk.

The cases are the edges a fuzzer found: NUL characters (PostgreSQL cannot store them), nesting
about 1,000 levels deep, NaN and Infinity (not JSON), lone surrogates (not text), integers over
Python's 4,300-digit limit, a speaker given as a list or an object; and a BOM in labels.json,
accepted like BOMs in every other file.
"""
import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from annotation.models import Corpus, Dialog, ImportRun, RunStatus, Turn
from annotation.services.import_uploads import start_upload_import
from annotation.services.imports import ImportFailed, import_corpus

pytestmark = pytest.mark.django_db

DEEP = 1000
# A JSON value nested DEEP levels: [[[ ... ]]], written as text (json.dumps would recurse too far).
DEEP_JSON = "[" * DEEP + "]" * DEEP
HUGE_INT = "9" * 5000
SURROGATE = '"bad \\ud800 text"'  # JSON's escape for a lone surrogate


def _user_system(user_text='"hello"', system_text='"hi there"'):
    """A user and a system turn of each format, with the user's text as raw JSON text."""
    return user_text, system_text


# -- each format, with a hole where the malformed piece goes --------------------------------------
# Each builder takes raw JSON text for: the user turn's text, the dialog id, an extra value (kept
# as meta or raw) and the speaker, and returns {"data": text, ...}.
def multiwoz(text='"hello"', dialog_id='"D1.json"', extra='"x"', speaker=None):
    return {
        "data": (
            '{"D0.json": {"goal": {}, "log": [{"text": "ok", "metadata": {}}, {"text": "fine", "metadata": {"a": 1}}]},'
            f' {dialog_id}: {{"goal": {{"note": {extra}}}, "log": [{{"text": {text}, "metadata": {{}}}},'
            ' {"text": "sure", "metadata": {"a": 1}}]}}'
        )
    }


def dstc9(text='"hello"', dialog_id=None, extra='"x"', speaker='"U"', labels=None, knowledge=None):
    files = {
        "data": (
            '[[{"speaker": "U", "text": "ok"}],'
            f' [{{"speaker": {speaker}, "text": {text}, "note": {extra}}}, {{"speaker": "S", "text": "sure"}}]]'
        )
    }
    if labels is not None:
        files["labels"] = labels
    if knowledge is not None:
        files["knowledge"] = knowledge
    return files


def dstc6(text='"hello"', dialog_id='"d1"', extra='"x"', speaker=None):
    return {
        "data": (
            '[{"dialog_id": "d0", "utterances": ["ok", "fine"], "candidates": []},'
            f' {{"dialog_id": {dialog_id}, "utterances": [{text}, "sure"], "candidates": [], "answer": {extra}}}]'
        )
    }


def jsonl(text='"hello"', dialog_id='"d1"', extra='"x"', speaker='"user"'):
    return {
        "data": (
            '{"dialog_id": "d0", "turns": [{"speaker": "user", "text": "ok"}]}\n'
            f'{{"dialog_id": {dialog_id}, "turns": [{{"speaker": {speaker}, "text": {text}}}], "meta": {{"note": {extra}}}}}\n'
        )
    }


FORMATS = {"multiwoz": (multiwoz, "data.json"), "dstc9": (dstc9, "logs.json"), "dstc6": (dstc6, "dstc6.json"), "jsonl": (jsonl, "corpus.jsonl")}
FILE_NAMES = {"labels": "labels.json", "knowledge": "knowledge.json"}

# (case, format) -> (builder keyword arguments, expected words in the message)
CASES = {}
for fmt in FORMATS:
    CASES[("NUL in text", fmt)] = ({"text": '"a\\u0000b"'}, "NUL character")
    CASES[("deep nesting", fmt)] = ({"extra": DEEP_JSON}, "nested more than")
    CASES[("lone surrogate", fmt)] = ({"text": SURROGATE}, "lone surrogate")
    CASES[("huge integer", fmt)] = ({"extra": HUGE_INT}, "integer with more than")
    CASES[("NaN", fmt)] = ({"extra": "NaN"}, "NaN")
    CASES[("Infinity", fmt)] = ({"extra": "-Infinity"}, "Infinity")
    if fmt != "dstc9":  # DSTC9's dialog ids are instance numbers
        CASES[("NUL in id", fmt)] = ({"dialog_id": '"d\\u0000"'}, "NUL character")
    if fmt in ("dstc9", "jsonl"):  # the formats with a speaker field
        CASES[("speaker list", fmt)] = ({"speaker": '["user"]'}, '"speaker" must be')
        CASES[("speaker object", fmt)] = ({"speaker": '{"who": "user"}'}, '"speaker" must be')
CASES[("NaN in knowledge", "dstc9")] = ({"knowledge": '{"hotel": {"1": {"docs": {}, "x": NaN}}}'}, "knowledge.json")
CASES[("Infinity in knowledge", "dstc9")] = ({"knowledge": '{"hotel": {"1": {"docs": {}, "x": Infinity}}}'}, "Infinity")
CASES[("deep knowledge", "dstc9")] = ({"knowledge": '{"hotel": ' + DEEP_JSON + "}"}, "knowledge.json")
CASES[("huge integer in knowledge", "dstc9")] = ({"knowledge": '{"hotel": {"1": {"docs": {}, "x": ' + HUGE_INT + "}}}"}, "knowledge.json")
CASES[("NUL in labels", "dstc9")] = ({"labels": '[{"target": false}, {"target": true, "response": "a\\u0000"}]'}, "labels.json")

# Where the message must point, per format (the dialog with the bad piece, never the good one).
PLACES = {"multiwoz": "data.json", "dstc9": "logs.json", "dstc6": "dstc6.json", "jsonl": "corpus.jsonl line 2"}


def _write(tmp_path, fmt, files):
    data_name = FORMATS[fmt][1]
    paths = {}
    for role, text in files.items():
        path = tmp_path / (data_name if role == "data" else FILE_NAMES[role])
        path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
        paths[role] = path
    return paths


def _counts():
    return Corpus.objects.count(), Dialog.objects.count(), Turn.objects.count()


@pytest.mark.parametrize("case", list(CASES), ids=[f"{fmt}: {name}" for name, fmt in CASES])
def test_malformed_corpus_is_refused_everywhere_with_its_place(case, tmp_path, settings, django_capture_on_commit_callbacks):
    name, fmt = case
    kwargs, expected = CASES[case]
    builder = FORMATS[fmt][0]
    files = _write(tmp_path, fmt, builder(**kwargs))
    in_extra = set(files) - {"data"}
    place = FILE_NAMES[next(iter(in_extra))] if in_extra else PLACES[fmt]

    # The service.
    with pytest.raises(ImportFailed) as refused:
        import_corpus(name="broken", source_format=fmt, files=files)
    message = str(refused.value)
    assert expected in message and place in message, message
    assert "unexpected" not in message
    assert _counts() == (0, 0, 0)

    # The command line.
    options = [f"--{role}={path}" for role, path in files.items() if role != "data"]
    with pytest.raises(CommandError) as command_refused:
        call_command("import_corpus", "broken", str(files["data"]), "--format", fmt, *options)
    assert expected in str(command_refused.value)
    assert _counts() == (0, 0, 0)

    # An upload: the run fails with the reason, and the uploaded files are removed.
    uploads = {role: SimpleUploadedFile(path.name, path.read_bytes()) for role, path in files.items()}
    with django_capture_on_commit_callbacks(execute=True):
        run = start_upload_import(name="broken", source_format=fmt, files=uploads)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert expected in run.error and place in run.error, run.error
    assert str(settings.QUORUM_IMPORT_DIR) not in run.error
    assert _counts() == (0, 0, 0)
    assert not [p for p in Path(settings.QUORUM_IMPORT_DIR).rglob("*") if p.is_file()]


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_the_well_formed_base_of_each_case_imports(fmt, tmp_path):
    """The cases above differ from a good corpus only in their malformed piece."""
    files = _write(tmp_path, fmt, FORMATS[fmt][0]())
    corpus = import_corpus(name=fmt, source_format=fmt, files=files)
    assert corpus.dialogs.count() == 2


def test_a_bom_in_labels_json_is_accepted_like_a_bom_anywhere(tmp_path):
    labels = b"\xef\xbb\xbf" + json.dumps([{"target": False}, {"target": True, "response": "ok"}]).encode()
    knowledge = b"\xef\xbb\xbf" + json.dumps({"hotel": {"1": {"name": "A", "docs": {}}}}).encode()
    files = _write(tmp_path, "dstc9", {**dstc9(), "labels": labels, "knowledge": knowledge})
    files["data"].write_bytes(b"\xef\xbb\xbf" + files["data"].read_bytes())
    corpus = import_corpus(name="bom", source_format="dstc9", files=files)
    assert corpus.dialogs.get(external_id="1").meta == {"label": {"target": True, "response": "ok"}}


def test_a_failed_run_leaves_no_upload_but_a_succeeded_one_is_untouched_outside_the_import_dir(tmp_path, django_capture_on_commit_callbacks):
    """Files the import did not receive by upload (a path given to start_import) are never removed."""
    from annotation.services.imports import start_import

    files = _write(tmp_path, "jsonl", jsonl(text='"a\\u0000"'))
    with django_capture_on_commit_callbacks(execute=True):
        run = start_import(name="local", source_format="jsonl", files=files)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert files["data"].exists()
    assert ImportRun.objects.count() == 1


@pytest.mark.parametrize("size", [1, 5, 7, 11, 64])
def test_the_surrogate_guard_sees_escapes_split_between_reads_and_only_real_ones(size):
    """A surrogate pair or an escaped backslash cut by a read is not a lone surrogate; a lone
    surrogate is found wherever the reads cut it."""
    import io

    from annotation.importers.base import FormatError, JsonStreamGuard

    def read_all(text):
        guard = JsonStreamGuard(io.BytesIO(text), "x.json")
        while guard.read(size):
            pass

    read_all(b'["\\ud83d\\ude00", "\\\\ud800", "\\\\\\\\ud800 ok", "plain"]')  # a pair; escaped backslashes
    for bad in (b'["a",\n "\\ud800"]', b'["a",\n "\\udc00"]', b'["a",\n "\\\\\\ud800x"]', b'["a",\n "\\ud83d\\u0041"]'):
        with pytest.raises(FormatError, match="x.json line 2: a string holds a lone surrogate"):
            read_all(bad)


def _read_through(text: bytes, size: int) -> None:
    import io

    from annotation.importers.base import JsonStreamGuard

    guard = JsonStreamGuard(io.BytesIO(text), "x.json")
    while guard.read(size):
        pass


@pytest.mark.parametrize("size", [1, 3, 7, 11, 64])
def test_the_stream_guard_finds_nul_escapes_and_deep_nesting_wherever_the_reads_cut(size):
    """The streamed formats are checked on their bytes (no second pass over each parsed dialog):
    a NUL escape and nesting past the limit are refused with their line; an escaped backslash
    before "u0000", and brackets or escaped quotes inside strings, are text."""
    from annotation.importers.base import FormatError
    from annotation.importers.json_errors import MAX_DEPTH

    _read_through(b'["\\\\u0000", "a \\" [[[[ \\\\", "\\\\\\\\u0000", "' + b"[" * 200 + b'"]', size)
    _read_through(b"[" * MAX_DEPTH + b"]" * MAX_DEPTH, size)  # exactly the limit is fine
    with pytest.raises(FormatError, match="x.json line 2: a string holds a NUL character"):
        _read_through(b'["a",\n "b\\u0000"]', size)
    with pytest.raises(FormatError, match="x.json line 3: a value is nested more than"):
        _read_through(b'{"a": "]]]]\\"",\n "b": 1,\n ' + b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1) + b"}", size)


def test_the_stream_guard_measures_nesting_as_the_parser_does():
    """Differential check: random JSON (strings full of brackets, quotes and backslashes), cut at
    random read sizes; the guard refuses exactly the documents that nest past the limit."""
    import random

    from annotation.importers.base import FormatError
    from annotation.importers.json_errors import MAX_DEPTH

    rng = random.Random(7)
    alphabet = '[]{}"\\ab\n'

    def value(depth):
        roll = rng.random()
        if depth > MAX_DEPTH + 3 or roll < 0.3:
            return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6)))
        if roll < 0.65:
            return [value(depth + 1) for _ in range(rng.randint(1, 2))]
        return {f"k{i}": value(depth + 1) for i in range(rng.randint(1, 2))}

    def nesting(v):
        stack, deepest = [(v, 1)], 0
        while stack:
            current, level = stack.pop()
            if isinstance(current, (list, dict)):
                deepest = max(deepest, level)
                stack.extend((child, level + 1) for child in (current.values() if isinstance(current, dict) else current))
        return deepest

    refused_seen = accepted_seen = 0
    for _ in range(300):
        doc = value(0)
        text = json.dumps(doc).encode()
        too_deep = nesting(doc) > MAX_DEPTH
        try:
            _read_through(text, rng.choice([1, 5, 13, 64, 4096]))
            refused = False
        except FormatError:
            refused = True
        assert refused == too_deep, text[:200]
        refused_seen += refused
        accepted_seen += not refused
    assert refused_seen > 20 and accepted_seen > 20  # both sides of the limit were exercised
