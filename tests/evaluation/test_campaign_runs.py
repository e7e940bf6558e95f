"""Planner runs and human-evaluation imports started from the campaign page run in the background
(issue 23, item 4): the request answers at once, the run's progress endpoint gives its state and the
fragment the page shows, and the run ends with the result or with the error and what to do."""
import io
import zipfile
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from evaluation.campaigns.services.campaigns import create_campaign
from evaluation.models import CampaignRun, Rating

from .conftest import DSTC9
from .test_api_finalists_human_eval import zipped
from .test_power import write_pilot

pytestmark = pytest.mark.django_db

GOAL = {"top_k": 2, "power": 0.8, "max_raters": 3, "provider": "mturk", "reward": "0.10"}


def progress(client, run):
    return client.get(reverse("evaluation:campaign-run-progress", args=[run.campaign_id, run.pk])).json()


def uploads_left() -> list[Path]:
    root = Path(settings.QUORUM_IMPORT_DIR)
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


def test_a_planner_run_is_followed_from_pending_to_its_plan(campaign, client, organizer, tmp_path, django_capture_on_commit_callbacks):
    client.force_login(organizer)
    page = reverse("evaluation:campaign-results", args=[campaign.pk])
    with write_pilot(tmp_path / "pilot.csv").open("rb") as handle, django_capture_on_commit_callbacks() as queued:
        response = client.post(page, {**GOAL, "pilot_file": handle})
    assert response.status_code == 302 and len(queued) == 1
    run = CampaignRun.objects.get()
    assert run.kind == "plan" and run.upload_name == "pilot.csv" and Path(run.upload).is_file()
    state = progress(client, run)
    assert (state["status"], state["finished"], state["done"], state["total"]) == ("pending", False, 0, None)
    assert "data-progress-url" in state["html"]

    queued[0]()  # the worker runs it
    state = progress(client, run)
    assert state["status"] == "succeeded" and state["finished"]
    assert state["done"] == state["total"] == GOAL["max_raters"]  # one unit per raters-per-instance count searched
    assert "Recommended:" in state["html"] and 'id="plan-options"' in state["html"] and "data-progress-url" not in state["html"]
    run.refresh_from_db()
    assert [o["raters_per_instance"] for o in run.result["options"]] == [1, 2, 3]
    assert uploads_left() == []  # the pilot file is removed with the run


def test_a_bad_pilot_is_refused_at_once_and_starts_nothing(campaign, client, organizer, tmp_path):
    client.force_login(organizer)
    bad = tmp_path / "bad.csv"
    bad.write_text("system,instance,rater,question,rating\na,1,x,q,4\nb,1,y,q,seven\n", encoding="utf-8")
    with bad.open("rb") as handle:
        response = client.post(reverse("evaluation:campaign-results", args=[campaign.pk]), {**GOAL, "pilot_file": handle})
    assert response.status_code == 400 and "No plan: bad.csv line 3" in response.content.decode()
    assert not CampaignRun.objects.exists() and uploads_left() == []


def test_a_plan_out_of_the_pilots_reach_fails_saying_what_to_change(campaign, client, organizer, django_capture_on_commit_callbacks):
    client.force_login(organizer)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("evaluation:campaign-results", args=[campaign.pk]), {**GOAL, "pilot_campaign": campaign.pk, "top_k": 99})
    run = CampaignRun.objects.get()
    state = progress(client, run)
    assert state["status"] == "failed" and "top k must be between 2 and the number of systems" in state["error"]
    assert "Change the pilot or the goal in the planner form" in state["error"] and 'role="alert"' in state["html"]


def test_a_human_evaluation_import_runs_in_the_background_and_counts_what_it_stored(
    test_set, client, organizer, django_capture_on_commit_callbacks
):
    campaign = create_campaign("past", test_set, [])
    client.force_login(organizer)
    url = reverse("evaluation:campaign-import-human-eval", args=[campaign.pk])
    with django_capture_on_commit_callbacks() as queued:
        response = client.post(url, {"file": SimpleUploadedFile("he.zip", zipped(DSTC9 / "human_eval").read())})
    assert response.status_code == 302 and response["Location"].endswith("#human-eval-import")
    run = CampaignRun.objects.get()
    assert progress(client, run)["status"] == "pending" and not Rating.objects.filter(campaign=campaign).exists()
    queued[0]()
    state = progress(client, run)
    ratings = Rating.objects.filter(campaign=campaign)
    entries = ratings.values("entry").distinct().count()
    assert state["status"] == "succeeded" and state["done"] == state["total"] == 2 * entries  # each entry checked, then stored
    assert f"Imported {ratings.count()} ratings of {entries} entries." in state["html"]
    assert uploads_left() == []


def test_importing_the_same_ratings_again_says_to_tick_replace_and_what_the_campaign_keeps(
    test_set, client, organizer, django_capture_on_commit_callbacks
):
    campaign = create_campaign("past", test_set, [])
    client.force_login(organizer)
    url = reverse("evaluation:campaign-import-human-eval", args=[campaign.pk])
    for _ in range(2):
        with django_capture_on_commit_callbacks(execute=True):
            client.post(url, {"file": SimpleUploadedFile("he.zip", zipped(DSTC9 / "human_eval").read())})
    kept = Rating.objects.filter(campaign=campaign).count()
    state = progress(client, CampaignRun.objects.order_by("-pk").first())
    assert state["status"] == "failed" and "tick “Replace ratings already imported for the same entries”" in state["error"]
    assert "Correct the archive" not in state["error"]  # the archive is fine
    assert f"The campaign keeps the {kept:,} ratings it had." in state["error"] and kept > 0


def test_a_broken_archive_imports_nothing_and_says_what_to_do(test_set, client, organizer, django_capture_on_commit_callbacks):
    campaign = create_campaign("past", test_set, [])
    client.force_login(organizer)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("team1/entry0.human_eval.json", "{not json")
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("evaluation:campaign-import-human-eval", args=[campaign.pk]), {"file": SimpleUploadedFile("he.zip", buffer.getvalue())})
    state = progress(client, CampaignRun.objects.get())
    assert state["status"] == "failed" and state["error"].startswith("Nothing was imported: ")
    assert "Correct the archive and import it again" in state["error"]
    assert not Rating.objects.filter(campaign=campaign).exists() and uploads_left() == []


def test_a_run_is_read_through_its_own_campaign_by_organizers_only(campaign, client, organizer, make_annotator):
    run = CampaignRun.objects.create(campaign=campaign, kind="plan")
    other = create_campaign("other", campaign.test_set, [])
    assert client.get(reverse("evaluation:campaign-run-progress", args=[campaign.pk, run.pk])).status_code == 302
    client.force_login(make_annotator("ann")[0])
    assert client.get(reverse("evaluation:campaign-run-progress", args=[campaign.pk, run.pk])).status_code == 403
    client.force_login(organizer)
    assert client.get(reverse("evaluation:campaign-run-progress", args=[other.pk, run.pk])).status_code == 404


def test_a_pilot_campaign_without_ratings_is_refused_at_once(test_set, client, organizer):
    empty = create_campaign("not rated yet", test_set, [])
    client.force_login(organizer)
    response = client.post(reverse("evaluation:campaign-results", args=[empty.pk]), {**GOAL, "pilot_campaign": empty.pk})
    assert response.status_code == 400 and "No plan: campaign &#x27;not rated yet&#x27; has no ratings yet to plan from" in response.content.decode()
    assert not CampaignRun.objects.exists()


def test_the_sweep_queues_a_lost_run_again_and_fails_one_whose_worker_was_lost(campaign, tmp_path, settings):
    from datetime import timedelta

    from django.utils import timezone

    from annotation.services.import_uploads import save_uploads
    from evaluation.campaigns.services.runs import settle_stuck_runs

    long_ago = timezone.now() - timedelta(minutes=settings.QUORUM_RUN_DEADLINE_MINUTES + 5)
    options = {"pilot_campaign": campaign.pk, **GOAL, "delta": None}
    lost = CampaignRun.objects.create(campaign=campaign, kind="plan", options=options)
    recent = CampaignRun.objects.create(campaign=campaign, kind="plan", options=options)
    upload = save_uploads({"upload": SimpleUploadedFile("he.zip", b"PK")})["upload"]
    abandoned = CampaignRun.objects.create(campaign=campaign, kind="human_eval_import", status="running", started_at=long_ago, upload=str(upload))
    CampaignRun.objects.filter(pk__in=[lost.pk, abandoned.pk]).update(created_at=long_ago)

    assert settle_stuck_runs() == {"requeued": 1, "failed": 1}  # tasks run in-process in tests: the lost run is done now
    lost.refresh_from_db(), recent.refresh_from_db(), abandoned.refresh_from_db()
    assert lost.status == "succeeded" and "best" in lost.result
    assert recent.status == "pending"  # not yet past the deadline: its task may still come
    assert abandoned.status == "failed" and "the worker running it was lost" in abandoned.error and not upload.exists()


def test_a_closed_campaigns_set_up_unfolds_for_a_recent_run_only(campaign, client, organizer):
    from datetime import timedelta

    from django.utils import timezone

    from evaluation.models import Campaign

    Campaign.objects.filter(pk=campaign.pk).update(state=Campaign.State.CLOSED)
    client.force_login(organizer)
    url = reverse("evaluation:campaign-results", args=[campaign.pk])
    folded = '<details class="card" id="campaign-setup">'
    assert folded in client.get(url).content.decode()
    run = CampaignRun.objects.create(campaign=campaign, kind="plan", status="running")
    assert folded not in client.get(url).content.decode()  # under way: shown with its progress
    CampaignRun.objects.filter(pk=run.pk).update(status="failed", error="x", finished_at=timezone.now() - timedelta(hours=2))
    assert folded in client.get(url).content.decode()  # long finished: folded again
