"""Organizer pages for campaigns. They read stored results only; computing is a task."""
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, render

from annotation.roles import is_organizer

from . import leaderboard, plots, selectors
from .models import Campaign


def _organizer_only(request):
    if not is_organizer(request.user):
        raise PermissionDenied("Only organizers can see evaluation campaigns.")


def _with_cells(rows, questions):
    """Score cells per question, formatted here because templates cannot index by a variable key."""
    for row in rows:
        row["cells"] = [
            "n/a" if row[q] is None else f"{row[q]:.3f} [{row[q + '_ci_low']:.3f}, {row[q + '_ci_high']:.3f}]" for q in questions
        ]
    return rows


@login_required
def campaign_list(request):
    _organizer_only(request)
    return render(request, "evaluation/campaign_list.html", {"campaigns": selectors.campaigns()})


@login_required
def campaign_results(request, pk):
    _organizer_only(request)
    campaign = get_object_or_404(Campaign.objects.select_related("test_set__challenge"), pk=pk)
    current = selectors.current_result(campaign)
    shown = current or selectors.latest_result(campaign)
    context = {
        "campaign": campaign,
        "result": shown,
        "stale": shown is not None and current is None,
        "rows": _with_cells(leaderboard.rows(shown.report), campaign.questions) if shown else [],
        "questions": campaign.questions,
        "agreement": shown.report["agreement"] if shown else {},
        "crowd": selectors.crowd_progress(campaign),
    }
    return render(request, "evaluation/campaign_results.html", context)


PLOTS = {"scores": plots.scores_with_intervals, "ratings": plots.rating_distributions}


@login_required
def campaign_plot(request, pk, kind):
    """A PNG drawn from the stored report (no statistic is recomputed here)."""
    _organizer_only(request)
    draw = PLOTS.get(kind)
    campaign = get_object_or_404(Campaign, pk=pk)
    shown = selectors.current_result(campaign) or selectors.latest_result(campaign)
    if draw is None or shown is None:
        raise Http404("No such plot, or no results yet.")
    response = HttpResponse(content_type="image/png")
    draw(shown.report, response)
    response["Cache-Control"] = "private, max-age=300"
    return response
