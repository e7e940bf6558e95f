"""A corpus uploaded as a .zip (MultiWOZ ships its data.json zipped): the zip's one .json/.jsonl
member is imported through the page, the API and the command alike; a zip with several such
members, none, or a damaged archive is refused with what it holds and what to upload instead, and
nothing is recorded or imported."""
import io
import zipfile
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.models import Corpus, ImportRun
from annotation.services.imports import import_corpus
from tests.shared_data import missing, shared_data

pytestmark = pytest.mark.django_db

MULTIWOZ = Path(__file__).resolve().parents[1] / "fixtures" / "corpora" / "multiwoz21-sample.json"
VALIDATION = shared_data("multiwoz21-val-convlab2.json.zip")


def zipped(members: dict, name="corpus.json.zip") -> io.BytesIO:
    """An upload holding `members` ({name: bytes}), deflated as MultiWOZ's zip is."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for member, content in members.items():
            archive.writestr(member, content)
    buffer.seek(0)
    buffer.name = name
    return buffer


def nothing_kept(settings) -> bool:
    return not ImportRun.objects.exists() and not Corpus.objects.exists() and not any(Path(settings.QUORUM_IMPORT_DIR).rglob("*.*"))


def test_the_upload_page_imports_the_one_json_file_of_a_zip(organizer, client, django_capture_on_commit_callbacks):
    client.force_login(organizer)
    upload = zipped({"MultiWOZ_2.1/data.json": MULTIWOZ.read_bytes(), "__MACOSX/MultiWOZ_2.1/._data.json": b"\0"})
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("organizer:corpus-upload"), {"name": "zipped", "source_format": "multiwoz", "data": upload})
    page = client.get(response["Location"]).content.decode()
    assert "Succeeded" in page
    assert Corpus.objects.get(name="zipped").dialogs.count() == 1


def test_the_upload_page_says_a_zip_is_accepted(organizer, client):
    client.force_login(organizer)
    page = client.get(reverse("organizer:corpus-upload")).content.decode()
    assert "or a .zip holding that one file" in page


def test_a_zip_with_several_json_files_is_a_400_naming_them(organizer_api, settings):
    upload = zipped({"logs.json": b"[]", "labels.json": b"[]", "README.txt": b"hello"})
    response = organizer_api.post("/api/corpora/", {"name": "two", "source_format": "dstc9", "data": upload}, format="multipart")
    assert response.status_code == 400
    [message] = response.data["data"]
    assert "holds 2 .json/.jsonl files (labels.json, logs.json)" in message
    assert "upload a .zip holding only the corpus file, or that file itself" in message
    assert nothing_kept(settings)


def test_a_zip_with_no_json_file_is_refused_on_the_page_with_what_it_holds(organizer, client, settings):
    client.force_login(organizer)
    upload = zipped({"data.csv": b"a,b", "notes/README.md": b"hi"})
    response = client.post(reverse("organizer:corpus-upload"), {"name": "none", "source_format": "multiwoz", "data": upload})
    assert response.status_code == 200
    page = response.content.decode()
    assert "the .zip holds data.csv, notes/README.md, and no .json or .jsonl file" in page
    assert "upload the corpus&#x27;s .json or .jsonl file itself, or a .zip holding only that file" in page
    assert nothing_kept(settings)


def test_a_damaged_archive_is_refused_as_not_a_zip(organizer_api, settings):
    upload = io.BytesIO(b"PK\x03\x04 not really a zip")
    upload.name = "data.json.zip"
    response = organizer_api.post("/api/corpora/", {"name": "bad", "source_format": "multiwoz", "data": upload}, format="multipart")
    assert response.status_code == 400
    assert response.data["data"] == [
        "data.json.zip: data.json.zip is not a .zip archive; upload the corpus's .json or .jsonl file itself, or a .zip holding only that file"
    ]
    assert nothing_kept(settings)


def test_the_command_imports_a_zip_and_names_the_member_inside_it_when_refused(tmp_path, capsys):
    good = tmp_path / "good.zip"
    good.write_bytes(zipped({"data.json": MULTIWOZ.read_bytes()}).getvalue())
    call_command("import_corpus", "restaurants", str(good), "--format", "multiwoz")
    assert "1 dialogs, 6 turns (3 user turns)" in capsys.readouterr().out

    broken = tmp_path / "broken.zip"
    broken.write_bytes(zipped({"data.json": b'{"X": {"goal": {}, "log": [{"metadata": {}}]}}'}).getvalue())
    with pytest.raises(CommandError, match=r"data\.json \(in broken\.zip\): dialog \"X\""):
        call_command("import_corpus", "broken", str(broken), "--format", "multiwoz")
    assert not Corpus.objects.filter(name="broken").exists()


@pytest.mark.skipif(not VALIDATION.is_file(), reason=missing(VALIDATION))
def test_multiwoz_validation_split_imports_zipped_as_it_ships():
    corpus = import_corpus(name="val", source_format="multiwoz", files={"data": VALIDATION})
    assert (corpus.import_summary.dialogs, corpus.import_summary.user_turns) == (999, 7365)


def test_the_progress_moves_while_a_zip_is_unpacked_then_while_it_is_read(tmp_path, monkeypatch):
    """Unpacking a large zip took a while with the bar at 0: it is now the bar's first half."""
    from quorum import archives

    monkeypatch.setattr(archives, "_CHUNK", 256)  # several chunks from the small sample
    content = MULTIWOZ.read_bytes()
    path = tmp_path / "data.json.zip"
    path.write_bytes(zipped({"data.json": content}).getvalue())
    seen = []
    import_corpus(name="zipped", source_format="multiwoz", files={"data": path}, progress=lambda done, total: seen.append((done, total)))
    size = len(content)
    assert {total for _done, total in seen} == {2 * size}
    unpacking = [done for done, _total in seen if done <= size]
    assert len(unpacking) >= size // 256 and unpacking[: size // 256] == sorted(unpacking[: size // 256])
    assert (size, 2 * size) in seen and seen[-1] == (2 * size, 2 * size)
    assert [done for done, _total in seen] == sorted(done for done, _total in seen)
