"""The review card's "How it was written" lists the fields as the card's answers do (Paraphrase,
Typos, Verbose, Simplified), under the same labels. It listed them in the stored log's key order,
which PostgreSQL's JSON gives shortest name first (typos, verbose, paraphrase, simplified), under
the raw field names."""
import json
import re

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Response
from annotation.services.responses import confirm
from tests.factories import good_answers, make_corpus, make_live_job

from .test_typing_log import claimed, typed


@pytest.mark.django_db
def test_how_it_was_written_follows_the_answers_order_and_labels(organizer):
    job = make_live_job(make_corpus(dialogs=1, user_turns=1), name="rewrites")
    slot, url = claimed(job)
    answers = good_answers(slot.item)
    # Posted in another order than the card's: the page must not depend on how the log was keyed.
    log = {name: typed(answers[name]) for name in reversed(list(answers))}
    Client().post(url, {**answers, "typing_log": json.dumps(log)})
    confirm(Response.objects.get(slot=slot), actor="provider:prolific")
    client = Client()
    client.force_login(organizer)
    page = client.get(reverse("organizer:job-review", kwargs={"pk": job.pk})).content.decode()
    written = page[page.index("How it was written"):]
    assert re.findall(r'data-field="([^"]+)"', written) == ["paraphrase", "typos", "verbose", "simplified"]
    assert re.findall(r'<span class="label">([^<]+):</span>', written) == ["Paraphrase", "Typos", "Verbose", "Simplified"]
