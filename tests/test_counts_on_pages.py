"""Counts people read on organizer and evaluation pages are written by quorum/numbers.py's rule,
thousands separated ("123,888 ratings", not "123888 ratings"); an attribute a browser reads (a
progress bar's value) keeps the plain number, and the CSV and JSON downloads are untouched."""
import dataclasses
from types import SimpleNamespace

import pytest
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from annotation.web import organizer_views
from evaluation.campaigns import forms as campaign_forms
from tests.factories import make_corpus, make_live_job


def test_an_imported_human_evaluation_says_its_ratings_thousands_separated():
    run = SimpleNamespace(
        pk=1, campaign_id=1, kind="human_eval", status="succeeded", upload_name="", created_at=timezone.now(), progress=1, error="",
        result={"ratings": 123888, "entries": 12}, get_kind_display=lambda: "Human evaluation import", get_status_display=lambda: "Succeeded",
    )
    html = render_to_string("evaluation/_campaign_run.html", {"run": run})
    assert "Imported 123,888 ratings of 12 entries." in html


def test_a_plan_says_its_pilot_and_sizes_thousands_separated():
    plan = {
        "pilot": {"n_ratings": 24500, "n_instances": 4181, "components": {}}, "binding": {}, "max_instances": 20000,
        "options": [{"raters_per_instance": 3, "instances": 12000, "ratings": 36000, "power": 0.8, "simulated": True, "cost": None},
                    {"raters_per_instance": 1, "instances": None, "ratings": None, "power": None, "cost": None}],
        "best": {"instances": 12000, "raters_per_instance": 3}, "systems": 4,
    }
    html = render_to_string("evaluation/_plan_result.html", {"p": plan})
    assert "Pilot: 24,500 ratings on 4,181 instances" in html
    assert "<td>12,000</td><td>36,000</td>" in html and "<td>out of reach</td><td></td>" in html
    assert "Recommended: 12,000 instances" in html


def test_the_test_set_choices_say_their_size_thousands_separated():
    test_set = SimpleNamespace(challenge="DSTC9 Track 1", name="test", size=4181, n_entries=12)
    assert campaign_forms.TestSetChoiceField(queryset=None).label_from_instance(test_set) == "DSTC9 Track 1 / test (4,181 instances, 12 entries)"


@pytest.mark.django_db
def test_the_job_page_says_its_progress_thousands_separated(organizer, client, monkeypatch):
    job = make_live_job(make_corpus(dialogs=1, user_turns=1), name="big")
    real = organizer_views.job_progress

    def big(job):
        return dataclasses.replace(real(job), items_total=14748, items_complete=12000, slots_total=44244, slots_submitted=36000,
                                   responses_by_status={"accepted": 35000})

    monkeypatch.setattr(organizer_views, "job_progress", big)
    client.force_login(organizer)
    page = client.get(reverse("organizer:job", kwargs={"pk": job.pk})).content.decode()
    assert "12,000 / 14,748 items complete" in page
    assert "36,000 / 44,244 responses" in page and "accepted: 35,000" in page
    assert 'value="36000"' in page  # the progress bar's value is for the browser
