"""Campaign pages: organizers only, and they read stored results without computing."""
import pytest
from django.test import RequestFactory

from evaluation.campaigns import views
from evaluation.campaigns.services.campaigns import compute_campaign_results
from evaluation.models import CampaignResult
from evaluation.stats import fragility

pytestmark = pytest.mark.django_db


def get(user, view, **kwargs):
    request = RequestFactory().get("/")
    request.user = user
    return view(request, **kwargs)


def test_results_page_shows_the_stored_leaderboard(organizer, campaign):
    response = get(organizer, views.campaign_results, pk=campaign.pk)
    assert b"No results yet" in response.content
    assert b'Press <a href="#campaign-actions">Compute results</a>' in response.content  # the page's own button, first
    assert not CampaignResult.objects.exists()  # the page did not compute anything
    compute_campaign_results(campaign.pk)
    campaign.refresh_from_db()
    page = get(organizer, views.campaign_results, pk=campaign.pk).content.decode()
    assert "team1/entry1" in page and "ground-truth/labels (ground truth)" in page and 'id="pairwise"' in page and "ordinal" in page


def test_results_page_shows_how_many_ratings_hold_each_order(organizer, campaign, settings):
    settings.QUORUM_FRAGILITY_MARK_SHARE = 1.0  # every order is held by less than all the ratings: all marked
    result = compute_campaign_results(campaign.pk)
    page = get(organizer, views.campaign_results, pk=campaign.pk).content.decode()
    table = page[page.index('id="fragility"'):page.index("</table>", page.index('id="fragility"'))]
    top = result.report["fragility"]["top"]
    assert "rank 1" in table and top["above"] in table and fragility.share_text(top["share"]) in table
    pairs = result.report["fragility"]["pairs"]
    top_is_a_pair = any((p["above"], p["below"]) == (top["above"], top["below"]) for p in pairs)  # then one row holds both
    assert table.count("<strong>fragile</strong>") == sum(1 for p in pairs if p["count"] is not None) + (top["count"] is not None and not top_is_a_pair)
    assert "100%" in page[page.index("<h2>Fragility</h2>"):page.index('id="fragility"')]


def test_annotators_are_refused(make_annotator, campaign):
    user, _ = make_annotator("ann")
    for response in (get(user, views.campaign_results, pk=campaign.pk), get(user, views.campaign_list)):
        assert response.status_code == 403
        assert b"Organizers only" in response.content


def test_results_page_shows_both_plots_drawn_from_the_stored_report(organizer, campaign, client):
    from django.http import Http404
    from django.urls import reverse

    with pytest.raises(Http404):
        get(organizer, views.campaign_plot, pk=campaign.pk, kind="scores")  # nothing computed yet
    compute_campaign_results(campaign.pk)
    page = get(organizer, views.campaign_results, pk=campaign.pk).content.decode()
    for kind in ("scores", "ratings"):
        url = reverse("evaluation:campaign-plot", args=[campaign.pk, kind])
        assert url in page
        client.force_login(organizer)
        png = client.get(url)
        assert png.status_code == 200 and png["Content-Type"] == "image/png"
        assert png.content.startswith(b"\x89PNG")
    assert client.get(reverse("evaluation:campaign-plot", args=[campaign.pk, "pie"])).status_code == 404
    assert CampaignResult.objects.count() == 1  # drawing did not recompute


def test_finalists_are_selected_on_the_campaign_list_page_and_can_start_a_campaign(organizer, test_set, client):
    from django.urls import reverse

    from evaluation.campaigns.services.imports import import_entries, import_objective_scores
    from evaluation.models import Campaign

    from .conftest import DSTC9

    import_entries(test_set, DSTC9 / "entries")
    import_objective_scores(test_set, DSTC9 / "score.csv")
    client.force_login(organizer)
    url = reverse("evaluation:campaigns")
    refused = client.post(url, {"test_set": test_set.pk, "metrics": "", "top": "2"})
    assert "Name at least one objective metric" in refused.content.decode()
    page = client.post(url, {"test_set": test_set.pk, "metrics": "detection_f1,selection_r@1", "top": "2", "campaign": "finals"})
    html = page.content.decode()
    assert 'id="finalist-table"' in html and "team1" in html
    campaign = Campaign.objects.get(name="finals")
    assert campaign.entries.filter(is_baseline=False, is_ground_truth=False).count() <= 2


def test_past_human_evaluations_import_from_the_campaign_page_all_or_nothing(organizer, test_set, client, django_capture_on_commit_callbacks):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    from evaluation.campaigns.services.campaigns import create_campaign
    from evaluation.models import Rating

    from .conftest import DSTC9
    from .test_api_finalists_human_eval import zipped

    campaign = create_campaign("past", test_set, [])
    client.force_login(organizer)
    url = reverse("evaluation:campaign-import-human-eval", args=[campaign.pk])
    bad = client.post(url, {"file": SimpleUploadedFile("x.zip", b"not a zip")}, follow=True)
    assert "Nothing was imported: the file is not a .zip archive" in bad.content.decode()
    assert not Rating.objects.filter(campaign=campaign).exists()
    with django_capture_on_commit_callbacks(execute=True):  # the import runs in the background, here at the commit
        client.post(url, {"file": SimpleUploadedFile("he.zip", zipped(DSTC9 / "human_eval").read())})
    good = client.get(reverse("evaluation:campaign-results", args=[campaign.pk]))
    ratings = Rating.objects.filter(campaign=campaign)
    entries = ratings.values("entry").distinct().count()
    assert ratings.exists()
    assert f"Imported {ratings.count()} ratings of {entries} entries." in good.content.decode()
    queued = client.post(reverse("evaluation:campaign-compute", args=[campaign.pk]), follow=True)
    assert "Results are being computed" in queued.content.decode()


def test_results_page_shows_how_response_length_goes_with_the_score(organizer, campaign):
    import numpy as np
    from scipy import stats

    from evaluation.models import Rating

    varied = campaign.entries.exclude(outputs=None).order_by("pk").first()
    varied.outputs = [{**o, "response": " ".join(["word"] * (1 + i % 7))} if o.get("response") else o for i, o in enumerate(varied.outputs)]
    varied.save(update_fields=["outputs"])  # the fixture's responses all have one length: give one entry several
    result = compute_campaign_results(campaign.pk)
    page = get(organizer, views.campaign_results, pk=campaign.pk).content.decode()
    assert 'id="length-association"' in page
    rows = {row["system"]: row for row in result.report["length_association"]}
    assert rows[varied.label]["rho"] is not None
    # Independently: each rated instance's mean over questions of its mean rating, against the words of the response.
    for entry in campaign.entries.exclude(outputs=None):
        per = {}
        for r in Rating.objects.filter(campaign=campaign, entry=entry):
            per.setdefault(r.instance, {}).setdefault(r.question, []).append(r.value)
        pairs = [(len(entry.outputs[i]["response"].split()), np.mean([np.mean(v) for v in by_q.values()]))
                 for i, by_q in per.items() if (entry.outputs[i].get("response") or "").strip()]
        row = rows[entry.label]
        assert row["n"] == len(pairs)
        if row["rho"] is not None:
            assert row["rho"] == pytest.approx(stats.spearmanr(*zip(*pairs, strict=True)).statistic)


def test_a_line_separates_tie_groups_in_the_leaderboard_html(organizer, campaign):
    result = compute_campaign_results(campaign.pk)
    systems = result.report["systems"]
    entries = [row for row in systems if row["kind"] == "entry" and row["rank"] is not None]
    assert len(entries) >= 2
    for k, row in enumerate(entries):  # two groups: the first entry, then the others
        row["rank"], row["rank_low"], row["rank_high"] = (1, 1, 1) if k == 0 else (2, 2, len(entries))
    CampaignResult.objects.filter(pk=result.pk).update(report=result.report)
    page = get(organizer, views.campaign_results, pk=campaign.pk).content.decode()
    table = page[page.index('id="leaderboard"'):page.index("</table>", page.index('id="leaderboard"'))]
    body_rows = table.split("<tbody>")[1].split("<tr")[1:]
    starts = [row.startswith(' class="tie-group-start"') for row in body_rows]
    assert starts.count(True) == 1
    assert entries[1]["system"] in body_rows[starts.index(True)]  # above the second group's first row
    assert "Rows share a rank (a tie group) unless a line separates them" in page


def test_starts_group_draws_a_line_only_between_entries_of_different_ranks():
    from evaluation.campaigns import leaderboard

    table = [{"rank": 1, "kind": "entry"}, {"rank": None, "kind": "ground_truth"}, {"rank": 1, "kind": "entry"},
             {"rank": 3, "kind": "entry"}, {"rank": None, "kind": "baseline"}, {"rank": 3, "kind": "entry"}, {"rank": None, "kind": "entry"}]
    assert leaderboard.starts_group(table) == [False, False, False, True, False, False, False]
