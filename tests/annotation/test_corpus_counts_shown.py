"""The builder reads how big a corpus is where they need it: the import's page says how many dialogs
and turns came in once the import has succeeded (and the progress answer that replaces the page's
fragment says it too), and the job form's corpus choices say how many dialogs and user turns each has,
from one query however many corpora there are."""
import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import ImportRun, Turn
from annotation.tasks import run_import
from tests.factories import make_corpus

pytestmark = pytest.mark.django_db
COUNTS = "143 dialogs, 2,002 turns (1,001 user turns)"


def test_the_import_page_says_what_came_in_once_it_succeeded(organizer, client, tmp_path):
    data = tmp_path / "big.jsonl"
    # 143 dialogs of 14 turns, 7 by the user: 2,002 turns, 1,001 user turns.
    with data.open("w") as out:
        for d in range(143):
            turns = [{"speaker": "user" if t % 2 == 0 else "system", "text": f"Turn {t} of dialog {d}."} for t in range(14)]
            out.write(json.dumps({"dialog_id": f"d{d}", "turns": turns}) + "\n")
    run = ImportRun.objects.create(corpus_name="Big corpus", source_format="jsonl", files={"data": str(data)})
    client.force_login(organizer)
    page = reverse("organizer:import-run", args=[run.pk])
    progress = reverse("organizer:import-progress", args=[run.pk])
    assert 'id="corpus-counts"' not in client.get(page).content.decode()  # nothing to count yet
    assert 'id="corpus-counts"' not in client.get(progress).json()["html"]

    run_import(run.pk)

    # The fragment progress.js puts in the open page says it, and so does the page loaded again.
    assert f"It has {COUNTS}." in client.get(progress).json()["html"]
    assert f"It has {COUNTS}." in client.get(page).content.decode()


def test_the_job_forms_corpus_choices_say_what_a_sample_can_draw_from(organizer, client):
    client.force_login(organizer)
    val = make_corpus("MultiWOZ val", dialogs=2, user_turns=2)
    dialog = val.dialogs.first()
    Turn.objects.bulk_create(Turn(dialog=dialog, index=100 + i, speaker="user", text=f"More {i}.") for i in range(1000))
    make_corpus("tiny", dialogs=1, user_turns=1)
    with CaptureQueriesContext(connection) as two:
        form = client.get(reverse("organizer:job-new")).content.decode()
    assert f'<option value="{val.pk}">MultiWOZ val (2 dialogs, 1,004 user turns)</option>' in form
    assert "tiny (1 dialog, 1 user turn)</option>" in form

    for i in range(3):
        make_corpus(f"more {i}", dialogs=2, user_turns=1)
    with CaptureQueriesContext(connection) as five:
        assert "more 2 (2 dialogs, 2 user turns)" in client.get(reverse("organizer:job-new")).content.decode()
    assert len(five) == len(two)  # one query for the choices and their counts, not one per corpus
