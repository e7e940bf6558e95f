"""The FED sets list names each set's level in words, as the set's page and the forms do ("Turn level
(FED turn questions about one response in its context)"), not the stored code "turn"."""
import json
import re

from django.test import Client
from django.urls import reverse

from evaluation.fed.services import import_fed_static
from evaluation.models import FedSet

LINE = json.dumps({"context_id": "c1", "context": [{"speaker": "user", "text": "Hi!"}], "responses": {"bot-a": "Hello there."}})


def test_the_sets_list_shows_the_level_in_words(db, organizer):
    import_fed_static(name="turns", jsonl=LINE.encode(), level="turn")
    import_fed_static(name="dialogs", jsonl=LINE.encode(), level="dialog")
    client = Client()
    client.force_login(organizer)
    page = client.get(reverse("evaluation:fed-sets")).content.decode()
    cells = re.findall(r"<td>([^<]*)</td>", page.split('id="fed-sets"')[1].split("</table>")[0])
    assert FedSet.Level.TURN.label in cells and FedSet.Level.DIALOG.label in cells
    assert "turn" not in cells and "dialog" not in cells
