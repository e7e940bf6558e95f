"""The corpus upload form from the keyboard: the DSTC9 files are asked for only when DSTC9 is the
format chosen (they were offered for every format, and a MultiWOZ upload with them was refused),
and the field's help is read with it."""
import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_dstc9_files_appear_only_with_the_dstc9_format(page, dialogs, organizer_login):
    organizer_login("/organize/corpora/upload/")
    labels, knowledge = page.get_by_label("Labels"), page.get_by_label("Knowledge")
    expect(page.get_by_label("Corpus file")).to_be_visible()
    expect(labels).to_be_hidden()
    expect(knowledge).to_be_hidden()

    page.get_by_label("Name").fill("dstc9 val")
    page.keyboard.press("Tab")  # to the format, by keyboard
    expect(page.get_by_label("Format")).to_be_focused()
    expect(page.get_by_label("Format")).to_have_accessible_description("The file's format; a file of another format is refused by the import, which says what it found.")
    page.keyboard.press("ArrowDown")  # MultiWOZ -> DSTC9
    expect(page.get_by_label("Format")).to_have_value("dstc9")
    expect(labels).to_be_visible()
    expect(knowledge).to_be_visible()
    expect(labels).to_have_accessible_description("Optional: DSTC9 labels.json, aligned with logs.json.")

    page.get_by_label("Format").select_option("jsonl")
    expect(labels).to_be_hidden()
    assert dialogs == []
