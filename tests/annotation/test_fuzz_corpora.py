"""Property-based fuzzing of the four corpus importers (Hypothesis; issue 11).

From a well-formed corpus of each format, Hypothesis builds malformed ones (values replaced by NUL,
lone surrogates, NaN, huge integers, deep nesting or wrong types; keys dropped or unknown keys added;
a BOM, a cut or a byte that is not UTF-8) and each goes through the service and an upload. The
property: the import either succeeds whole, or fails with the importer's own error (`ImportFailed`,
a failed run) naming the file, never another exception and never "unexpected"; a failure writes no
row and leaves no uploaded file behind. Bounded and derandomised (tests/fuzz_json.FUZZ).
"""
import json
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from hypothesis import given, settings
from hypothesis import strategies as st

from annotation.models import Corpus, Dialog, ImportRun, RunStatus, Turn
from annotation.services.import_uploads import start_upload_import
from annotation.services.imports import ImportFailed, import_corpus
from tests.fuzz_json import FUZZ, dumps, examples, mutated, spoilt_bytes

from .test_malformed_corpora import FILE_NAMES, FORMATS

pytestmark = [pytest.mark.django_db, pytest.mark.fuzz]

EXAMPLES = 60  # per format; the four run in about 20 s
LABELS = [{"target": False}, {"target": True, "response": "ok"}]
KNOWLEDGE = {"hotel": {"1": {"name": "A", "docs": {"0": {"title": "t", "body": "b"}}}}}
RAN = Counter()  # examples run, and their outcomes, per format: printed at the end of the module


def _documents(fmt) -> dict:
    """The well-formed base of a format as JSON values, per file role."""
    text = FORMATS[fmt][0]()["data"]
    data = [json.loads(line) for line in text.splitlines()] if fmt == "jsonl" else json.loads(text)
    return {"data": data, **({"labels": LABELS, "knowledge": KNOWLEDGE} if fmt == "dstc9" else {})}


def _text(fmt, role, document) -> str:
    if fmt == "jsonl" and role == "data" and isinstance(document, list):
        return "\n".join(dumps(dialog) for dialog in document) + "\n"
    return dumps(document)


@st.composite
def corpora(draw, fmt):
    """{role: bytes} of a corpus of `fmt` with one of its files malformed."""
    documents = _documents(fmt)
    role = draw(st.sampled_from(sorted(documents)))
    documents[role] = draw(mutated(documents[role]))
    files = {r: _text(fmt, r, d).encode("utf-8", "surrogatepass") for r, d in documents.items()}
    files[role] = draw(spoilt_bytes(_text(fmt, role, documents[role])))
    return files


def _counts():
    return Corpus.objects.count(), Dialog.objects.count(), Turn.objects.count()


def _fuzz(fmt, files, settings_, capture):
    data_name = FORMATS[fmt][1]
    names = {role: data_name if role == "data" else FILE_NAMES[role] for role in files}
    number = sum(RAN[(fmt, outcome)] for outcome in ("imported", "refused"))
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for role, content in files.items():
            paths[role] = Path(tmp) / names[role]
            paths[role].write_bytes(content)
        before = _counts()
        try:
            corpus = import_corpus(name=f"fuzz-{fmt}-{number}", source_format=fmt, files=paths)
        except ImportFailed as exc:
            message = str(exc)
            assert "unexpected" not in message and tmp not in message, message
            assert any(name in message for name in names.values()), f"no file named in {message!r}"
            assert _counts() == before, "a refused import wrote rows"
            outcome = "refused"
        else:
            dialogs = corpus.dialogs.count()
            assert dialogs > 0 and _counts()[:2] == (before[0] + 1, before[1] + dialogs)
            corpus.delete()
            outcome = "imported"
    RAN[(fmt, outcome)] += 1

    # The same files as an upload: the run ends succeeded or failed with a reason, and a failed
    # one leaves neither rows nor files.
    uploads = {role: SimpleUploadedFile(names[role], content) for role, content in files.items()}
    before = _counts()
    try:
        with capture(execute=True):
            run = start_upload_import(name=f"fuzz-up-{fmt}-{number}", source_format=fmt, files=uploads)
    except ImportFailed as exc:  # refused before the run was queued (nothing saved)
        assert "unexpected" not in str(exc)
        run = None
    if run is not None:
        run.refresh_from_db()
        assert run.status in (RunStatus.SUCCEEDED, RunStatus.FAILED), run.status
        assert (run.status == RunStatus.SUCCEEDED) == (outcome == "imported"), (run.status, run.error)
        if run.status == RunStatus.FAILED:
            assert "unexpected" not in run.error and str(settings_.QUORUM_IMPORT_DIR) not in run.error, run.error
            assert _counts() == before
        else:
            Corpus.objects.filter(pk=run.corpus_id).delete()
        ImportRun.objects.filter(pk=run.pk).delete()
    left = [p for p in Path(settings_.QUORUM_IMPORT_DIR).rglob("*") if p.is_file()]
    if outcome == "refused":
        assert not left, f"uploaded files left after a failed import: {left}"
    for path in left:
        path.unlink()


def _fuzzer(fmt):
    @settings(FUZZ, max_examples=examples(EXAMPLES))
    @given(files=corpora(fmt))
    def test(files, settings, django_capture_on_commit_callbacks):
        _fuzz(fmt, files, settings, django_capture_on_commit_callbacks)

    test.__name__ = f"test_fuzzed_{fmt}_corpora_import_whole_or_fail_cleanly"
    return test


test_fuzzed_multiwoz_corpora_import_whole_or_fail_cleanly = _fuzzer("multiwoz")
test_fuzzed_dstc9_corpora_import_whole_or_fail_cleanly = _fuzzer("dstc9")
test_fuzzed_dstc6_corpora_import_whole_or_fail_cleanly = _fuzzer("dstc6")
test_fuzzed_jsonl_corpora_import_whole_or_fail_cleanly = _fuzzer("jsonl")


@pytest.fixture(scope="module", autouse=True)
def _report_counts():
    yield
    if RAN:
        print("\ncorpus fuzzer cases:", ", ".join(f"{fmt} {outcome} {n}" for (fmt, outcome), n in sorted(RAN.items())))
