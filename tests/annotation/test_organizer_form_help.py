"""Every field of the forms a builder fills first (upload a corpus, new job) says what it is for, and
its help is tied to it for a screen reader: each `aria-describedby` names an element of the page."""
import re

import pytest
from django.urls import reverse

from tests.factories import make_corpus

pytestmark = pytest.mark.django_db


def _described(html: str) -> tuple[list[str], set[str]]:
    """The ids the page's fields are described by, and the ids the page has."""
    return re.findall(r'aria-describedby="([^"]+)"', html), set(re.findall(r'\bid="([^"]+)"', html))


@pytest.mark.parametrize("page, fields", [
    ("organizer:corpus-upload", ["name", "source_format", "data", "labels", "knowledge"]),
    ("organizer:job-new", ["corpus", "name", "task_type", "selection_mode", "redundancy", "reward", "instructions"]),
])
def test_each_field_has_help_tied_to_it(organizer, client, page, fields):
    make_corpus(dialogs=1)
    client.force_login(organizer)
    html = client.get(reverse(page)).content.decode()
    described_by, ids = _described(html)
    missing = sorted({target for target in described_by if target not in ids})
    assert missing == []  # each named an element that was not on the page
    assert [f for f in fields if f"id_{f}_helptext" not in ids] == []


def test_dstc9_files_are_asked_for_only_with_the_dstc9_format(organizer, client):
    client.force_login(organizer)
    html = client.get(reverse("organizer:corpus-upload")).content.decode()
    for field in ("labels", "knowledge"):
        box = html[: html.index(f'id="id_{field}"')].rsplit("<div", 2)[-2]
        assert 'data-shown-when="source_format=dstc9"' in box
