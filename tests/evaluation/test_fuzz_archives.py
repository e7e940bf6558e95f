"""Property-based fuzzing of the archive imports (Hypothesis; issue 11): human-evaluation archives
(`import_human_eval_archive`), entries archives (`import_entries_upload`) and test-set archives
(`import_test_set_upload`).

From a well-formed archive, Hypothesis builds malformed ones in two ways at once: a member's JSON
spoilt (tests/fuzz_json: NUL, lone surrogates, NaN, huge integers, deep nesting, wrong types, a
BOM, a cut, a byte that is not UTF-8) and the zip itself spoilt (names that climb out or are too
long, a name twice, a file that is also a folder, symbolic links, the encryption flag, a compression
method Python cannot read, a flipped data byte, sizes that lie, a cut archive, other compressions).
The property: the import succeeds whole, or raises `EvaluationInputError` whose message names no
server path; a failure writes no row, and no unpacked folder is left behind.
"""
import io
import json
import struct
import tempfile
import warnings
import zipfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.campaigns.services.campaigns import create_campaign
from evaluation.campaigns.services.uploads import import_entries_upload, import_human_eval_archive, import_test_set_upload
from evaluation.errors import EvaluationInputError
from evaluation.models import Entry, Rating, TestSet
from tests.fuzz_json import FUZZ, dumps, examples, mutated, spoilt_bytes

from .conftest import DSTC9

pytestmark = [pytest.mark.django_db, pytest.mark.fuzz]

EXAMPLES = 60  # per archive kind; the three run in about 10 s
HUMAN_EVAL = {
    "team2/entry0.json": json.loads((DSTC9 / "human_eval" / "team2" / "entry0.json").read_text()),
    "team2/entry0.human_eval.json": json.loads((DSTC9 / "human_eval" / "team2" / "entry0.human_eval.json").read_text()),
}
ENTRIES = {"team2/entry0.json": json.loads((DSTC9 / "entries" / "team2" / "entry0.json").read_text())}
TEST_SET = {
    "test/labels.json": json.loads((DSTC9 / "labels.json").read_text()),
    "knowledge.json": json.loads((DSTC9 / "knowledge.json").read_text()),
}
RAN = Counter()
BAD_NAMES = ["../x.json", "/abs/entry0.json", "team2/../../x.json", "t" * 101 + "/entry0.json", "team2/" + "e" * 101 + ".json",
             "team2", "team2/entry0.json/inner.json", "", "./team2/entry0.json", "team2\\entry0.json", "team2//entry0.json"]
ZIP_FAULTS = ["none", "none", "rename", "twice", "clash", "symlink", "encrypted", "method", "flip", "size lie", "cut", "deflate", "bzip2", "lzma"]


def _central(data: bytes, index: int) -> int:
    """Offset of the `index`-th central directory record."""
    at = -1
    for _ in range(index + 1):
        at = data.index(b"PK\x01\x02", at + 1)
    return at


@st.composite
def archives(draw, base):
    members = {name: draw(spoilt_bytes(dumps(doc))) for name, doc in base.items()}
    spoilt = draw(st.sampled_from(sorted(base) + [None]))
    if spoilt is not None:
        members[spoilt] = draw(spoilt_bytes(dumps(draw(mutated(base[spoilt])))))
    fault = draw(st.sampled_from(ZIP_FAULTS))
    names = list(members)
    if fault == "rename":
        old = draw(st.sampled_from(names))
        members = {(draw(st.sampled_from(BAD_NAMES)) if n == old else n): c for n, c in members.items()}
    first = next(iter(members.items()))
    extra = {"twice": [first], "clash": [("team2/entry0.json/", b""), ("team2/x", b"1")]}.get(fault, [])
    method = {"deflate": zipfile.ZIP_DEFLATED, "bzip2": zipfile.ZIP_BZIP2, "lzma": zipfile.ZIP_LZMA}.get(fault, zipfile.ZIP_STORED)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about the name written twice, on purpose
        for index, (name, content) in enumerate([*members.items(), *extra]):
            info = zipfile.ZipInfo(name)
            info.compress_type = method
            kind = 0o120777 if fault == "symlink" and index == 0 else (0o40755 if name.endswith("/") else 0o100644)
            info.external_attr = kind << 16
            archive.writestr(info, content)
    data = buffer.getvalue()
    record = _central(data, draw(st.integers(0, len(members) - 1)))
    if fault == "encrypted":
        data = data[: record + 8] + struct.pack("<H", 1) + data[record + 10 :]
    elif fault == "method":
        data = data[: record + 10] + struct.pack("<H", draw(st.sampled_from([9, 98, 99, 1]))) + data[record + 12 :]
    elif fault == "size lie":
        size = draw(st.sampled_from([0, 1, 10, 2**31]))
        data = data[: record + 20] + struct.pack("<II", size, size) + data[record + 28 :]
    elif fault == "flip":
        at = draw(st.integers(30, max(30, record - 1)))
        data = data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :]
    elif fault == "cut":
        data = data[: draw(st.integers(0, len(data) - 1))]
    return data


def _unpacked_folders():
    return {p.name for p in Path(tempfile.gettempdir()).glob("quorum-upload-*")}


def _rows():
    return TestSet.objects.count(), Entry.objects.count(), Rating.objects.count()


def _fuzz(kind, data, target):
    before = _rows()
    folders = _unpacked_folders()
    entries = set(Entry.objects.values_list("pk", flat=True))
    upload = io.BytesIO(data)
    upload.name = "archive.zip"
    try:
        if kind == "human evaluations":
            result = import_human_eval_archive(target, upload)
        elif kind == "entries":
            result = import_entries_upload(target, upload)
        else:
            result = {"entries": 1, "test set": import_test_set_upload("Fuzz", f"t{sum(RAN.values())}", archive=upload)}
    except EvaluationInputError as exc:
        message = str(exc)
        assert "quorum-upload" not in message and tempfile.gettempdir() not in message, message
        assert _rows() == before, "a refused archive wrote rows"
        RAN[(kind, "refused")] += 1
    else:
        assert result["entries"] >= 1
        if "test set" in result:
            result["test set"].delete()
        Rating.objects.all().delete()
        Entry.objects.exclude(pk__in=entries).delete()
        RAN[(kind, "imported")] += 1
    assert _unpacked_folders() <= folders, "an unpacked archive was left in the temporary folder"


@settings(FUZZ, max_examples=examples(EXAMPLES))
@given(data=archives(HUMAN_EVAL))
def test_fuzzed_human_evaluation_archives_import_whole_or_fail_cleanly(data, test_set):
    campaign = getattr(test_set, "_fuzz_campaign", None) or create_campaign("fuzz", test_set, [])
    test_set._fuzz_campaign = campaign
    _fuzz("human evaluations", data, campaign)


@settings(FUZZ, max_examples=examples(EXAMPLES))
@given(data=archives(ENTRIES))
def test_fuzzed_entries_archives_import_whole_or_fail_cleanly(data, test_set):
    _fuzz("entries", data, test_set)


@settings(FUZZ, max_examples=examples(EXAMPLES))
@given(data=archives(TEST_SET))
def test_fuzzed_test_set_archives_import_whole_or_fail_cleanly(data, db):
    _fuzz("test sets", data, None)


@pytest.fixture(scope="module", autouse=True)
def _report_counts():
    yield
    if RAN:
        print("\narchive fuzzer cases:", ", ".join(f"{kind} {outcome} {n}" for (kind, outcome), n in sorted(RAN.items())))
