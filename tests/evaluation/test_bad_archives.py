"""Malformed archives through the API (entries, human evaluations, test sets): each bad zip is built
here in code and refused with a 400 that names the archive member and the problem (never a server
path), and nothing is written. A human-evaluation import runs in the background: what its zip's
listing shows is refused at once, what only its contents show fails the run with the same reason.
"""
import io
import json
import struct
import zipfile

import pytest

from evaluation.campaigns.services.campaigns import create_campaign
from evaluation.models import CampaignRun, Entry, Rating, TestSet

from .conftest import DSTC9

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.evaluation.api_test_urls")]

BASE = "/api/evaluation"
GOOD_ENTRY = (DSTC9 / "entries").rglob("*.json").__next__().read_text()  # one well-formed output


@pytest.fixture
def api(organizer_api):
    return organizer_api


def _zip(members, *, symlinks=()):
    """A zip of {name: text}; names in `symlinks` become Unix symbolic links to their text."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for name, content in members.items():
            info = zipfile.ZipInfo(name)
            if name.endswith("/"):
                info.external_attr = (0o40755 << 16) | 0x10
            elif name in symlinks:
                info.external_attr = 0o120777 << 16
            else:
                info.external_attr = 0o100644 << 16
            archive.writestr(info, content)
    return buffer.getvalue()


def _patch_central(data: bytes, name: str, offset: int, fmt: str, value) -> bytes:
    """Overwrite a field of `name`'s central directory record (offsets from its signature)."""
    encoded = name.encode()
    at = 0
    while True:
        at = data.index(b"PK\x01\x02", at)
        (name_length,) = struct.unpack_from("<H", data, at + 28)
        if data[at + 46 : at + 46 + name_length] == encoded:
            break
        at += 4
    patched = bytearray(data)
    struct.pack_into(fmt, patched, at + offset, value)
    return bytes(patched)


def _with(name, content):
    return {"team1/entry0.json": GOOD_ENTRY, name: content}


def _output_with(field_text: str) -> str:
    """The good output with its first knowledge-seeking item's response replaced by raw JSON text."""
    items = json.loads(GOOD_ENTRY)
    index = next(i for i, item in enumerate(items) if item["target"])
    items[index]["response"] = "@@HOLE@@"
    return json.dumps(items).replace('"@@HOLE@@"', field_text)


def _knowledge_domain_list() -> str:
    items = json.loads(GOOD_ENTRY)
    item = next(item for item in items if item["target"])
    item["knowledge"] = [{"domain": ["hotel"], "entity_id": 1, "doc_id": 0}]
    return json.dumps(items)


def crc_error():
    data = _zip(_with("team2/entry0.json", GOOD_ENTRY))
    at = data.rindex(b'"target"')  # a byte of team2's data, after team1's
    return data[:at] + b"X" + data[at + 1 :]


def size_lie():
    data = _zip(_with("team2/entry0.json", GOOD_ENTRY))
    data = _patch_central(data, "team2/entry0.json", 20, "<I", 10)  # compressed size
    return _patch_central(data, "team2/entry0.json", 24, "<I", 10)  # uncompressed size


def encrypted():
    return _patch_central(_zip(_with("team2/entry0.json", GOOD_ENTRY)), "team2/entry0.json", 8, "<H", 0x1)


def unsupported_method():
    return _patch_central(_zip(_with("team2/entry0.json", GOOD_ENTRY)), "team2/entry0.json", 10, "<H", 9)  # Deflate64


CASES = {
    "CRC error": (crc_error, "'team2/entry0.json' cannot be unpacked (Bad CRC-32"),
    "size that lies": (size_lie, "'team2/entry0.json' cannot be unpacked"),
    "encrypted member": (encrypted, "'team2/entry0.json' is encrypted"),
    "unsupported compression": (unsupported_method, "'team2/entry0.json' uses a compression method Quorum cannot read (method 9)"),
    "file and folder": (lambda: _zip({**_with("team2", "x"), "team2/entry0.json": GOOD_ENTRY}), "'team2' is both a file and a folder"),
    "file and folder entry": (lambda: _zip({"team2/": "", **_with("team2", "x")}), "'team2' is both a file and a folder"),
    "twice": (lambda: _twice(), "holds 'team1/entry0.json' more than once"),
    "symlinked folder": (lambda: _zip({**_with("link", "team1"), "link/entry1.json": GOOD_ENTRY}, symlinks={"link"}), "'link' is a symbolic link"),
    "long team name": (lambda: _zip(_with("t" * 101 + "/entry0.json", GOOD_ENTRY)), "team folder name is longer than 100 characters"),
    "long entry name": (lambda: _zip(_with("team2/" + "e" * 101 + ".json", GOOD_ENTRY)), "entry name is longer than 100 characters"),
    "deep nesting": (lambda: _zip(_with("team2/entry0.json", "[" * 5000 + "]" * 5000)), "team2/entry0.json: not valid JSON here (a value is nested too deeply)"),
    "nesting over the limit": (lambda: _zip(_with("team2/entry0.json", "[" * 100 + "]" * 100)), "team2/entry0.json: a value is nested more than 64 levels deep"),
    "huge integer": (lambda: _zip(_with("team2/entry0.json", "[" + "9" * 5000 + "]")), "team2/entry0.json: not valid JSON here (an integer with more than 4,300 digits)"),
    "NaN": (lambda: _zip(_with("team2/entry0.json", _output_with("NaN"))), "team2/entry0.json: not valid JSON here (NaN is not a JSON number)"),
    "NUL in an output": (lambda: _zip(_with("team2/entry0.json", _output_with('"a\\u0000b"'))), "team2/entry0.json: a string holds a NUL character"),
    "lone surrogate": (lambda: _zip(_with("team2/entry0.json", _output_with('"a\\udc00b"'))), "team2/entry0.json: a string holds a lone surrogate"),
    "knowledge domain a list": (lambda: _zip(_with("team2/entry0.json", _knowledge_domain_list())), "team2/entry0.json, instance"),
    "escape": (lambda: _zip(_with("../entry0.json", GOOD_ENTRY)), "'../entry0.json' points outside the archive"),
    "not a zip": (lambda: b"PK\x03\x04 not really", "is not a .zip archive"),
}


def _twice():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("team1/entry0.json", GOOD_ENTRY)
        with pytest.warns(UserWarning):  # the zip module warns about the duplicate name
            archive.writestr("team1/entry0.json", GOOD_ENTRY)
    return buffer.getvalue()


def _upload(data: bytes, name="entries.zip"):
    handle = io.BytesIO(data)
    handle.name = name
    return handle


def _assert_refused(response, expected):
    assert response.status_code == 400, response.content
    body = response.json()
    text = body["detail"] if "detail" in body else body["file"][0]  # the human-evals form names its field
    assert expected in text, text
    assert "quorum-upload" not in text and "/tmp" not in text


@pytest.mark.parametrize("case", CASES)
def test_a_bad_entries_archive_is_a_400_naming_the_member_and_writes_nothing(case, api, test_set):
    build, expected = CASES[case]
    response = api.post(f"{BASE}/test-sets/{test_set.pk}/entries/", {"archive": _upload(build())}, format="multipart")
    _assert_refused(response, expected)
    assert not Entry.objects.exists()


def _human_eval_archive(team: str, output: str, test_set) -> bytes:
    """An output with its ratings beside it, as a human-evaluation import needs."""
    return _zip({f"{team}/entry0.json": output, f"{team}/entry0.human_eval.json": json.dumps([None] * test_set.size)})


@pytest.mark.parametrize("case", ["encrypted member", "unsupported compression", "symlinked folder", "escape", "long team name"])
def test_a_human_evaluation_archive_whose_listing_is_bad_is_a_400_and_records_nothing(case, api, test_set, django_capture_on_commit_callbacks):
    build, expected = CASES[case]
    campaign = create_campaign("past", test_set, [])
    data = _human_eval_archive("t" * 101, GOOD_ENTRY, test_set) if case == "long team name" else build()
    with django_capture_on_commit_callbacks() as queued:
        response = api.post(f"{BASE}/campaigns/{campaign.pk}/human-evals/", {"file": _upload(data)}, format="multipart")
    _assert_refused(response, "longer than 100 characters" if case == "long team name" else expected)
    assert queued == [] and not CampaignRun.objects.exists()


@pytest.mark.parametrize("case", ["CRC error", "NUL in an output"])
def test_a_human_evaluation_archive_with_bad_contents_fails_its_run_and_writes_nothing(case, api, test_set, django_capture_on_commit_callbacks):
    campaign = create_campaign("past", test_set, [])
    if case == "CRC error":
        data = _human_eval_archive("team2", GOOD_ENTRY, test_set)
        at = data.rindex(b'"target"')  # a byte of the output's data
        data, expected = data[:at] + b"X" + data[at + 1 :], "'team2/entry0.json' cannot be unpacked (Bad CRC-32"
    else:
        data, expected = _human_eval_archive("team2", _output_with('"a\\u0000b"'), test_set), "entry0.json: a string holds a NUL character"
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(f"{BASE}/campaigns/{campaign.pk}/human-evals/", {"file": _upload(data)}, format="multipart")
    assert response.status_code == 202, response.content
    run = api.get(response["Location"]).json()
    assert run["status"] == "failed" and expected in run["error"], run
    assert "quorum-upload" not in run["error"] and "/tmp" not in run["error"]
    assert not Rating.objects.filter(campaign=campaign).exists()
    assert not Entry.objects.exists()


def test_a_test_set_archive_with_a_clash_or_bad_labels_is_refused(api):
    labels = (DSTC9 / "labels.json").read_text()
    before = TestSet.objects.count()
    clash = _zip({"test/labels.json": labels, "test": "x"})
    _assert_refused(api.post(f"{BASE}/test-sets/", {"challenge": "C", "name": "t", "archive": _upload(clash)}, format="multipart"), "'test' is both a file and a folder")
    nul = _zip({"test/labels.json": labels.replace('"response": "', '"response": "\\u0000', 1)})
    _assert_refused(api.post(f"{BASE}/test-sets/", {"challenge": "C", "name": "t", "archive": _upload(nul)}, format="multipart"), "test/labels.json: a string holds a NUL character")
    assert TestSet.objects.count() == before


def test_a_good_archive_built_the_same_way_is_accepted(api, test_set):
    response = api.post(f"{BASE}/test-sets/{test_set.pk}/entries/", {"archive": _upload(_zip(_with("team2/entry0.json", GOOD_ENTRY)))}, format="multipart")
    assert response.status_code in (200, 201), response.content
    assert Entry.objects.count() == 2
