"""The objective-scores page of a test set: compute the DSTC9 Track 1 metrics of its entries (in
the background, with progress), compare an uploaded score.csv, score a DSTC6 result file."""
from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from evaluation.campaigns.objective_forms import Dstc6ScoreForm, ScoreComparisonForm
from evaluation.campaigns.services.objective import (
    compare_score_csv,
    load_json_text,
    scorable_entries,
    score_dstc6_results,
    start_scoring,
    upload_text,
)
from evaluation.errors import EvaluationInputError
from evaluation.models import ObjectiveScoringRun, TestSet
from quorum.lazy_modules import lazy
from quorum.roles import organizer_required

if TYPE_CHECKING:
    from evaluation.stats import objective
else:
    objective = lazy("evaluation.stats.objective")


def _page(request, test_set, *, comparison_form=None, dstc6_form=None, comparison=None, dstc6=None, status=200):
    entries = list(scorable_entries(test_set))
    rows = [{"label": e.label, "values": [e.computed_scores.get(m) for m in objective.DSTC9_METRICS]} for e in entries]
    context = {
        "test_set": test_set, "metrics": objective.DSTC9_METRICS, "rows": rows,
        "run": ObjectiveScoringRun.objects.filter(test_set=test_set).order_by("-created_at", "-pk").first(),
        "compare_form": comparison_form or ScoreComparisonForm(), "dstc6_form": dstc6_form or Dstc6ScoreForm(),
        "comparison": comparison, "dstc6": dstc6,
    }
    return render(request, "evaluation/objective_scores.html", context, status=status)


@organizer_required
def objective_scores(request, pk):
    return _page(request, get_object_or_404(TestSet.objects.select_related("challenge"), pk=pk))


@organizer_required
@require_POST
def objective_scoring_start(request, pk):
    test_set = get_object_or_404(TestSet, pk=pk)
    try:
        start_scoring(test_set, created_by=request.user)
    except EvaluationInputError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, "Scoring started; its progress is shown below and the scores fill the table as entries are done.")
    return redirect("evaluation:objective-scores", pk=test_set.pk)


def _submitted(request, pk, form_class, key: str, run):
    """Bind `form_class` to the POST, then `run(form)` (its result shown on the page under `key`);
    an invalid form or a refusal comes back on the form with status 400."""
    test_set = get_object_or_404(TestSet.objects.select_related("challenge"), pk=pk)
    form = form_class(request.POST, request.FILES)
    if form.is_valid():
        try:
            return _page(request, test_set, **{f"{key}_form": form, key: run(test_set, form.cleaned_data)})
        except EvaluationInputError as exc:
            form.add_error(None, str(exc))
    return _page(request, test_set, **{f"{key}_form": form}, status=400)


def _comparison(test_set, data) -> dict:
    upload = data["scores"]
    return compare_score_csv(test_set, upload_text(upload), name=upload.name, tolerance=data["tolerance"])


def _dstc6(test_set, data) -> dict:
    dialogs = load_json_text(upload_text(data["test_set"]), data["test_set"].name)
    scores = score_dstc6_results(dialogs, upload_text(data["results"]), name=data["results"].name)
    return {"dialogs": scores["dialogs"], "precision": [(name, value) for name, value in scores.items() if name.startswith("precision@")]}


@organizer_required
@require_POST
def objective_scores_compare(request, pk):
    return _submitted(request, pk, ScoreComparisonForm, "comparison", _comparison)


@organizer_required
@require_POST
def dstc6_score(request, pk):
    return _submitted(request, pk, Dstc6ScoreForm, "dstc6", _dstc6)
