"""An export's CSV files are UTF-8 without a byte order mark (a BOM would break readers of plain
UTF-8), which Excel on Windows opens in the local code page, garbling Chinese. Every README with
CSV files says so and how to open them in Excel."""
import pytest

from annotation import task_types
from annotation.exporters.readme import render, render_answers
from annotation.services.claims import claim_next_slot, submit_response
from annotation.services.exports import export_job
from tests.factories import good_answers, make_corpus, make_live_job


def _says_how_to_open(readme: str) -> bool:
    return "UTF-8 without a byte order mark" in readme and "From Text/CSV" in readme and "65001: Unicode (UTF-8)" in readme


@pytest.mark.django_db
def test_a_test_set_export_s_readme_says_how_to_open_its_csv_files(make_annotator, tmp_path):
    job = make_live_job(make_corpus(dialogs=1, user_turns=1))
    worker = make_annotator("writer")[1]
    slot = claim_next_slot(job=job, worker=worker)
    submit_response(slot_id=slot.pk, worker=worker, answers=good_answers(slot.item))
    export_job(job, tmp_path / "out")
    assert _says_how_to_open((tmp_path / "out" / "README.md").read_text(encoding="utf-8"))
    assert not (tmp_path / "out" / "responses.csv").read_bytes().startswith(b"\xef\xbb\xbf")  # no BOM, as before


def test_an_answers_readme_says_it_too_and_a_readme_without_csv_does_not():
    manifest = {"job": {"id": 1, "name": "j", "task_type": "likert"}, "exported_at": "now", "quorum_version": "x", "agreement": []}
    assert _says_how_to_open(render_answers(manifest=manifest, files=["responses.csv", "items.csv"], columns={}, file_words={}))
    kind = task_types.get("rewrite")
    manifest = {
        "job": {"id": 1, "name": "j"}, "corpus": {"name": "c", "source_format": "jsonl"}, "exported_at": "now",
        "quorum_version": "x", "variants": {},
    }
    assert not _says_how_to_open(render(manifest=manifest, files=["paraphrase/dialogs.jsonl"], columns={}, words=kind.test_set_words({})))
