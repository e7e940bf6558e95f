"""Setting up an evaluation on the organizer pages: uploads, their refusals, the campaign's downloads
and the links between the organizer dashboard and the evaluation pages."""
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import RequestFactory
from django.urls import reverse

from evaluation.campaigns import leaderboard, views
from evaluation.campaigns.services.campaigns import compute_campaign_results
from evaluation.campaigns.services.imports import import_entries
from evaluation.models import Campaign, Entry, TestSet
from evaluation.tasks import compute_campaign_results as compute_task

from .conftest import DSTC9
from .test_api_finalists_human_eval import zipped

pytestmark = pytest.mark.django_db


def fixture_file(name, upload_name=None):
    return SimpleUploadedFile(upload_name or name, (DSTC9 / name).read_bytes())


@pytest.fixture
def signed_in(client, organizer):
    client.force_login(organizer)
    return client


@pytest.mark.parametrize(
    "view, kwargs",
    [
        (views.test_set_upload, {}),
        (views.test_set_logs_upload, {}),
        (views.entries_upload, {}),
        (views.campaign_download, {"pk": 1, "name": "leaderboard.csv"}),
    ],
)
def test_annotators_are_refused_every_set_up_page(make_annotator, view, kwargs):
    user, _ = make_annotator("ann")
    request = RequestFactory().post("/")
    request.user = user
    response = view(request, **kwargs)
    assert response.status_code == 403
    assert b"Organizers only" in response.content


def test_a_test_set_then_entries_with_scores_then_finalists(signed_in):
    page = signed_in.post(
        reverse("evaluation:test-set-upload"),
        {"challenge": "DSTC9 Track 1", "name": "test", "labels": fixture_file("labels.json"), "knowledge": fixture_file("knowledge.json")},
        follow=True,
    )
    assert "Imported test set “DSTC9 Track 1 / test”" in page.content.decode()
    test_set = TestSet.objects.get()
    page = signed_in.post(
        reverse("evaluation:entries-upload"),
        {"test_set": test_set.pk, "archive": SimpleUploadedFile("e.zip", zipped(DSTC9 / "entries").read()), "scores": fixture_file("score.csv"), "baseline_teams": "baseline", "ground_truth": "on"},
        follow=True,
    )
    assert "Imported 6 entries with outputs and their objective scores" in page.content.decode()
    assert Entry.objects.filter(is_ground_truth=True).exists() and Entry.objects.get(team__team_id="team2").objective_scores
    page = signed_in.post(reverse("evaluation:campaigns"), {"test_set": test_set.pk, "metrics": "detection_f1,selection_r@1", "top": "2", "campaign": "finals"})
    assert 'id="finalist-table"' in page.content.decode()
    assert Campaign.objects.get(name="finals").entries.filter(is_ground_truth=True).exists()


def test_logs_are_added_to_a_test_set(signed_in, test_set):
    logs = json.dumps([[{"speaker": "U", "text": "hi"}]] * test_set.size)
    page = signed_in.post(reverse("evaluation:test-set-logs-upload"), {"test_set": test_set.pk, "logs": SimpleUploadedFile("l.json", logs.encode())}, follow=True)
    assert "Stored the dialog contexts" in page.content.decode()
    test_set.refresh_from_db()
    assert len(test_set.logs) == test_set.size


def test_a_bad_upload_is_a_400_form_error_naming_the_member(signed_in, test_set):
    bad = zipped(DSTC9 / "entries", extra={"team9/entry0.json": "["}).read()
    page = signed_in.post(reverse("evaluation:entries-upload"), {"test_set": test_set.pk, "archive": SimpleUploadedFile("e.zip", bad)})
    html = page.content.decode()
    assert page.status_code == 400
    assert "Nothing was imported: team9/entry0.json: not valid JSON" in html and "quorum-upload" not in html
    assert not Entry.objects.exists()
    missing = signed_in.post(reverse("evaluation:test-set-upload"), {"challenge": "C", "name": "t"})
    assert missing.status_code == 400 and "give either labels.json" in missing.content.decode()
    assert TestSet.objects.count() == 1


def test_every_set_up_field_has_help_text():
    from evaluation.campaigns import forms

    for form_class in (forms.TestSetUploadForm, forms.TestSetLogsForm, forms.EntriesUploadForm):
        assert all(field.help_text for field in form_class.base_fields.values()), form_class


def test_the_campaign_page_offers_every_download_of_the_stored_results(signed_in, campaign):
    url = reverse("evaluation:campaign-download", args=[campaign.pk, "leaderboard.csv"])
    assert signed_in.get(url).status_code == 404  # nothing computed yet
    compute_task(campaign.pk)  # as "Compute results" does: the report and its files
    campaign.refresh_from_db()
    assert campaign.state == Campaign.State.CLOSED
    page = signed_in.get(reverse("evaluation:campaign-results", args=[campaign.pk])).content.decode()
    assert "Closed" in page
    # The page says in words how to read its intervals, ties and agreement, not only the method.
    assert 'id="reading-scores"' in page and "publish them as tied" in page
    assert 'id="reading-agreement"' in page and "1 is perfect agreement, 0 no more than chance would give" in page
    result = campaign.results.get()
    for fmt in ("json", "csv", "md"):
        name = f"leaderboard.{fmt}"
        assert reverse("evaluation:campaign-download", args=[campaign.pk, name]) in page
        response = signed_in.get(reverse("evaluation:campaign-download", args=[campaign.pk, name]))
        assert response.status_code == 200 and "attachment" in response["Content-Disposition"]
        assert response.content.decode() == leaderboard.render(result.report, fmt)
    scores = signed_in.get(reverse("evaluation:campaign-download", args=[campaign.pk, "instance_scores.csv"]))
    assert scores.status_code == 200 and b"".join(scores.streaming_content).startswith(b"team_id,entry_id,instance")
    for kind in ("scores", "ratings"):
        assert reverse("evaluation:campaign-plot", args=[campaign.pk, kind]) in page
    assert signed_in.get(reverse("evaluation:campaign-download", args=[campaign.pk, "agreement.json"])).status_code == 200
    assert signed_in.get(reverse("evaluation:campaign-download", args=[campaign.pk, "report.json"])).status_code == 404  # only named files


def test_instance_scores_not_yet_written_are_explained_not_served(signed_in, campaign):
    compute_campaign_results(campaign.pk)  # the service alone (e.g. a command) writes no files
    page = signed_in.get(reverse("evaluation:campaign-results", args=[campaign.pk])).content.decode()
    assert "press “Compute results” to write it" in page
    assert signed_in.get(reverse("evaluation:campaign-download", args=[campaign.pk, "instance_scores.csv"])).status_code == 404


def test_organizer_dashboard_and_evaluation_link_to_each_other(signed_in):
    dashboard = signed_in.get(reverse("organizer:dashboard")).content.decode()
    assert reverse("evaluation:campaigns") in dashboard
    evaluation = signed_in.get(reverse("evaluation:campaigns")).content.decode()
    assert reverse("organizer:dashboard") in evaluation


@pytest.mark.django_db
def test_knowledge_is_added_to_an_existing_test_set_from_the_page(organizer, client):
    from evaluation.campaigns.services.imports import import_test_set
    from evaluation.models import TestSet
    from tests.evaluation.conftest import DSTC9

    test_set = import_test_set("DSTC9 Track 1", "no-knowledge", DSTC9 / "labels.json")
    assert not test_set.knowledge
    client.force_login(organizer)
    with open(DSTC9 / "knowledge.json", "rb") as knowledge:
        response = client.post(reverse("evaluation:test-set-logs-upload"), {"test_set": test_set.pk, "knowledge": knowledge}, follow=True)
    assert "Stored the reference knowledge" in response.content.decode()
    assert TestSet.objects.get(pk=test_set.pk).knowledge
    nothing = client.post(reverse("evaluation:test-set-logs-upload"), {"test_set": test_set.pk})
    assert nothing.status_code == 400 and "Choose logs.json, knowledge.json or both" in nothing.content.decode()


@pytest.mark.django_db
def test_a_draft_campaigns_entry_without_outputs_is_listed_and_taken_out(organizer, client):
    from evaluation.campaigns.services.campaigns import create_campaign
    from evaluation.campaigns.services.imports import import_test_set
    from evaluation.models import Entry, Team
    from tests.evaluation.conftest import DSTC9

    test_set = import_test_set("DSTC9 Track 1", "t", DSTC9 / "labels.json", DSTC9 / "knowledge.json")
    team = Team.objects.create(challenge=test_set.challenge, team_id="team03")
    entry = Entry.objects.create(team=team, test_set=test_set, entry_id="entry0", outputs=None, objective_scores={"f1": 1})
    campaign = create_campaign("draft", test_set, [entry])
    client.force_login(organizer)
    page = client.get(reverse("evaluation:campaign-results", args=[campaign.pk])).content.decode()
    assert "team03/entry0" in page and "Take out" in page
    client.post(reverse("evaluation:campaign-entry-remove", args=[campaign.pk, entry.pk]))
    assert not campaign.entries.exists()


def _finalists_form(client):
    page = client.get(reverse("evaluation:campaigns")).content.decode()
    section = page[page.index('id="finalists"'):]
    return section[:section.index("</form>")]


def test_the_finalists_form_explains_every_field_and_names_the_metrics_it_can_rank_by(signed_in, test_set):
    form = _finalists_form(signed_in)
    assert form.count("<label") == form.count('class="muted help"') == 5
    assert "Available: none yet (upload a score file with the entries" in form
    import_entries(test_set, DSTC9 / "entries", scores_path=DSTC9 / "score.csv")
    assert "Available: detection_f1, generation_bleu-1, selection_r@1." in _finalists_form(signed_in)


def test_with_one_test_set_the_upload_forms_start_on_it(signed_in, test_set):
    import re

    page = signed_in.get(reverse("evaluation:campaigns")).content.decode()
    for prefix in ("logs", "entries"):
        select = re.search(rf'<select name="test_set"[^>]*id="{prefix}_test_set"[^>]*>(.*?)</select>', page, re.S)
        assert select, f"no test-set choice in the {prefix} form"
        assert re.search(rf'<option value="{test_set.pk}"[^>]*selected', select.group(1)), f"the {prefix} form starts on '---------'"


def _reading(page: str) -> str:
    import html
    import re

    found = re.search(r'<p class="help" id="reading-scores">(.*?)</p>', page, re.S).group(1)
    return html.unescape(" ".join(re.sub(r"<[^>]+>", " ", found).split()))


def test_the_reading_guide_says_what_the_stored_report_computed(signed_in, campaign):
    """The guide read "the mean rating of the system's responses ... with other dialogs and raters
    ... how far each system could move" beside Eq. 1's S_f, instance-only resamples and Holm rank
    ranges; it now says what the report's rows and method say."""
    compute_task(campaign.pk)
    report = campaign.results.get().report
    text = _reading(signed_in.get(reverse("evaluation:campaign-results", args=[campaign.pk])).content.decode())
    assert "mean rating of the system's responses" not in text and "could move" not in text
    weighted = [r["system"] for r in report["systems"] if r["rated"] and r["weighted"]]
    assert weighted and ("Eq. 1's S_f (DSTC9 Track 1), not the mean rating" in text)
    assert not report["method"]["raters_resampled"]
    assert "over test-set instances only (rater ids unknown or one rater, so raters were not resampled)" in text
    assert "with other raters" not in text
    assert f"The rank range gives the {report['method']['rank_range']}." in text


@pytest.mark.parametrize(("weighted", "resampled", "says", "never"), [
    ([True, True], True, ["each question's score is Eq. 1's S_f", "over test-set instances and raters"], ["instances only", "mean over rated instances"]),
    ([False, False], False, ["each question's score is the mean over rated instances of each instance's mean rating", "instances only"], ["S_f", "and raters"]),
    ([True, False], False, ["for a/e, Eq. 1's S_f", "for the other rows (which predict no knowledge-seeking turns), the mean over rated"], ["and raters"]),
])
def test_the_reading_guide_follows_the_report(weighted, resampled, says, never):
    report = {
        "method": {"ci": 0.95, "raters_resampled": resampled, "rank_range": "ranks the rule allows", "system_score": "x"},
        "systems": [{"system": name, "rated": True, "weighted": w} for name, w in zip(["a/e", "b/e"], weighted, strict=True)],
    }
    guide = views.reading_guide(report)
    text = guide["score"] + " " + guide["interval"]
    assert all(s in text for s in says), text
    assert not any(n in text for n in never), text
    assert guide["rank_range"] == "ranks the rule allows"
