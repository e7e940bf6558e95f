"""The evaluation REST API: campaigns, their results, leaderboard and agreement. Organizers only.

Thin views: results are computed by a Celery task (`POST .../results/`) and every read serves the
stored report; a refusal by a service (EvaluationInputError) or bad input is a 400 with a reason,
a refused delete of a campaign a 409 naming what depends on it.
"""
from __future__ import annotations

import io
from typing import TYPE_CHECKING

from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils import dateformat, timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import generics, status
from rest_framework.exceptions import Throttled, ValidationError
from rest_framework.parsers import FormParser
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from evaluation.api import serializers as s
from evaluation.campaigns import leaderboard
from evaluation.campaigns import selectors as campaign_selectors
from evaluation.campaigns.finalist_scores import finalist_rows
from evaluation.campaigns.services.campaigns import (
    create_finalist_campaign,
    refresh_inputs_version,
    select_finalists,
    set_adaptive,
)
from evaluation.campaigns.services.crowd import sync_campaign_ratings
from evaluation.campaigns.services.lifecycle import delete_campaign, rename_campaign
from evaluation.campaigns.services.lifecycle import dependents as campaign_dependents
from evaluation.campaigns.services.pairwise import recompute_if_older as recompute_pairwise_if_older
from evaluation.campaigns.services.pairwise import request_report as request_pairwise_report
from evaluation.campaigns.services.results_runs import request_campaign_results
from evaluation.campaigns.services.runs import start_human_eval_import
from evaluation.campaigns.services.uploads import (
    import_entries_upload,
    import_test_set_logs_upload,
    import_test_set_upload,
)
from evaluation.errors import EvaluationInputError
from evaluation.fed import results as fed_results
from evaluation.fed.results_file import results_csv
from evaluation.interactive import selectors as interactive_selectors
from evaluation.interactive.services.systems import import_goals, register_system
from evaluation.models import Campaign, FedSet, TestSet
from evaluation.stats import report_format
from quorum import limits
from quorum.api.accepted import accepted, location_header
from quorum.api.parsers import StrictMultiPartParser
from quorum.api.permissions import IsOrganizer
from quorum.api.query import RefusesUnknownQueryParameters
from quorum.lazy_modules import lazy
from quorum.progress import attempt_state

if TYPE_CHECKING:
    import pandas as pd

    from annotation.quality import agreement
    from evaluation.stats import bradley_terry
    from evaluation.stats import interactive as interactive_stats
else:
    pd = lazy("pandas")
    agreement = lazy("annotation.quality.agreement")
    bradley_terry = lazy("evaluation.stats.bradley_terry")
    interactive_stats = lazy("evaluation.stats.interactive")

NO_RESULTS = "no results have been computed for this campaign yet; POST to its results/ endpoint and try again when they are ready"
# A refusal is {"detail": reason} from a service, or {field: [reasons]} from a form's validation.
ERRORS = {400: OpenApiResponse(OpenApiTypes.OBJECT, description="The request cannot be carried out; the body says why (`detail`, or the fields to fix).")}
NOT_FOUND = {404: OpenApiResponse(s.EvaluationMessageSerializer, description="No such campaign.")}
NO_TEST_SET = {404: OpenApiResponse(s.EvaluationMessageSerializer, description="No such test set.")}
RUN_LOCATION = location_header("The started run's `url`: GET it to follow the run.")
NOT_READY = {409: OpenApiResponse(s.EvaluationMessageSerializer, description="No results computed yet.")}


class EvaluationAPI(RefusesUnknownQueryParameters):
    permission_classes = [IsOrganizer]

    def handle_exception(self, exc):
        if isinstance(exc, EvaluationInputError):
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return super().handle_exception(exc)

    def get_campaign(self, pk) -> Campaign:
        campaign = get_object_or_404(Campaign.objects.select_related("test_set__challenge"), pk=pk)
        self.check_object_permissions(self.request, campaign)
        return campaign


@extend_schema(summary="List evaluation campaigns with their rating counts and result status")
class CampaignListView(EvaluationAPI, generics.ListAPIView):
    serializer_class = s.CampaignSerializer

    def get_queryset(self):
        return campaign_selectors.campaigns_with_status()


@extend_schema_view(
    get=extend_schema(
        summary="One campaign: entries, crowd job progress, result status, adaptive looks and pair states, automatic judges",
        responses={200: s.CampaignDetailSerializer, **NOT_FOUND},
    ),
    patch=extend_schema(
        summary="Rename a campaign (its ratings, results and files stay)", request=s.CampaignRenameSerializer,
        responses={200: s.CampaignDetailSerializer, **ERRORS, **NOT_FOUND},
    ),
    delete=extend_schema(
        summary="Delete a campaign nothing depends on (no ratings, crowd job or judge scores)",
        responses={
            204: OpenApiResponse(description="Deleted, with its derived results and looks; its test set and entries stay."),
            409: OpenApiResponse(s.CampaignDeleteRefusedSerializer, description="Something depends on the campaign: each is named with what to do; nothing was deleted."),
            **NOT_FOUND,
        },
    ),
)
class CampaignDetailView(EvaluationAPI, generics.RetrieveAPIView):
    serializer_class = s.CampaignDetailSerializer

    def get_queryset(self):
        return campaign_selectors.campaigns_with_status()

    def patch(self, request, pk):
        campaign = self.get_object()
        form = s.CampaignRenameSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        rename_campaign(campaign, form.validated_data["name"])
        return Response(s.CampaignDetailSerializer(self.get_object()).data)

    def delete(self, request, pk):
        campaign = self.get_object()
        try:
            delete_campaign(campaign)
        except EvaluationInputError as exc:
            body = {"detail": str(exc), "dependents": campaign_dependents(campaign)}
            return Response(body, status=status.HTTP_409_CONFLICT)
        return Response(status=status.HTTP_204_NO_CONTENT)


class CampaignAdaptiveView(EvaluationAPI, APIView):
    """The adaptive settings the campaign's results page sets, including what a round adds (`unit`)."""

    @extend_schema(summary="A campaign's adaptive settings", responses={200: s.AdaptiveSettingsSerializer, **NOT_FOUND})
    def get(self, request, pk):
        return Response(s.AdaptiveSettingsSerializer(self.get_campaign(pk)).data)

    @extend_schema(
        summary="Change a campaign's adaptive settings (fields left out keep their value); refused once its crowd job exists",
        request=s.AdaptiveSettingsSerializer, responses={200: s.AdaptiveSettingsSerializer, **ERRORS, **NOT_FOUND},
    )
    def patch(self, request, pk):
        campaign = self.get_campaign(pk)
        form = s.AdaptiveSettingsSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        merged = {**s.AdaptiveSettingsSerializer(campaign).data, **form.validated_data}  # left out: kept
        campaign = set_adaptive(campaign, **merged)
        return Response(s.AdaptiveSettingsSerializer(campaign).data)


class CampaignResultsView(EvaluationAPI, APIView):
    @extend_schema(
        summary="Recompute a campaign's results for its current ratings (in the background)",
        description=(
            "Brings a crowd campaign's ratings up to date with its responses, then returns 200 when stored results "
            "already match the inputs, or 202 when their computation was queued (`run`): follow the campaign (`url`, also "
            "the Location header) until its `results` is current, or its `results_run` says the computation failed and why."
        ),
        request=None,
        parameters=[location_header(
            "The campaign: its `results_run` says whether the computation is queued, running or failed (and why); its `results` "
            "turns current once the results of the answer's `inputs_version` are stored."
        )],
        responses={200: s.ResultsRequestSerializer, 202: s.ResultsRequestSerializer, **ERRORS, **NOT_FOUND},
    )
    def post(self, request, pk):
        campaign = self.get_campaign(pk)
        synced = sync_campaign_ratings(campaign)
        version = refresh_inputs_version(campaign)
        # Which result is shown and when it was computed, without reading a report.
        shown_at, stale = campaign_selectors.shown_result_at(campaign)
        ready = shown_at is not None and not stale
        if not ready:
            request_campaign_results(campaign, by=request.user)  # refuses a campaign without entries or ratings (400)
        # The computation's record (CampaignResultsRun) is the campaign's latest attempt, not a resource of its
        # own: the one to follow is the campaign, whose `results_run` says how the attempt stands and whose
        # `results` the stored result turns current (the leaderboard would be a 409 until then).
        follow = reverse("evaluation-api:campaign", kwargs={"pk": campaign.pk})
        body = {
            "status": "ready" if ready else "queued", "inputs_version": version, "ratings_added": synced["added"],
            "ratings_removed": synced["removed"], "url": request.build_absolute_uri(follow),
            "run": campaign_selectors.results_run_state(campaign, shown_at),
        }
        body = s.ResultsRequestSerializer(body).data
        return Response(body) if ready else accepted(request, body, follow)


class TextRenderer(BaseRenderer):
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if isinstance(data, str):
            return data.encode(self.charset)
        # An error body (a dict) in a text format: its reason, readable.
        return str(data.get("detail", data) if isinstance(data, dict) else data).encode(self.charset)


class CSVRenderer(TextRenderer):
    media_type = "text/csv"
    format = "csv"


class MarkdownRenderer(TextRenderer):
    media_type = "text/markdown"
    format = "md"


def _stored_result(campaign):
    result, stale = campaign_selectors.shown_result(campaign)
    if result is None:
        return None, False, Response({"detail": NO_RESULTS}, status=status.HTTP_409_CONFLICT)
    return result, stale, None


class FormatParameter:
    """?format= picks the renderer (DRF's URL format override); one not in `formats` is a 400 that
    names them, not DRF's 404."""

    formats: tuple[str, ...] = ("json",)

    def perform_content_negotiation(self, request, force=False):
        wanted = request.query_params.get("format")
        if wanted is not None and wanted not in self.formats:
            if force:
                return JSONRenderer(), JSONRenderer.media_type
            raise ValidationError({"format": [f"format must be one of {', '.join(self.formats)}; got {wanted!r}"]})
        return super().perform_content_negotiation(request, force)  # type: ignore[misc]


class LeaderboardView(FormatParameter, EvaluationAPI, APIView):
    renderer_classes = [JSONRenderer, CSVRenderer, MarkdownRenderer]
    formats = tuple(leaderboard.FORMATS)

    @extend_schema(
        summary="A campaign's leaderboard from its stored results, as JSON, CSV or Markdown",
        description="Served from the stored results; when the ratings changed since, or the results were computed with an older method "
        "(older_method=true: an older report format, whose rank ranges may contradict the pairwise table), the older results are "
        "served with stale=true (header X-Results-Stale: 1) and the Markdown's first paragraph says which; "
        "POST /api/evaluation/campaigns/{id}/results/ computes them again.",
        parameters=[OpenApiParameter("format", str, enum=list(leaderboard.FORMATS), description="json (default), csv or md.")],
        responses={(200, "application/json"): OpenApiTypes.OBJECT, (200, "text/csv"): OpenApiTypes.STR, (200, "text/markdown"): OpenApiTypes.STR, **ERRORS, **NOT_FOUND, **NOT_READY},
    )
    def get(self, request, pk):
        campaign = self.get_campaign(pk)
        result, stale, refusal = _stored_result(campaign)
        if refusal is not None:
            return refusal
        fmt = request.accepted_renderer.format
        if fmt == "json":
            body = {**leaderboard.to_json_dict(result.report), "stale": stale, "older_method": campaign_selectors.older_method(result),
                    "computed_at": result.computed_at}
        else:
            body = leaderboard.render(result.report, fmt)
            if stale and fmt == "md":  # as the page's download says it
                at = dateformat.format(timezone.localtime(result.computed_at), "Y-m-d H:i T")
                body = leaderboard.out_of_date_note(result.report, at) + "\n\n" + body
        response = Response(body)
        if stale:
            response["X-Results-Stale"] = "1"
        return response


class CampaignAgreementView(EvaluationAPI, APIView):
    @extend_schema(
        summary="Krippendorff's alpha per question from a campaign's stored results",
        responses={200: OpenApiTypes.OBJECT, **NOT_FOUND, **NOT_READY},
    )
    def get(self, request, pk):
        campaign = self.get_campaign(pk)
        result, stale, refusal = _stored_result(campaign)
        if refusal is not None:
            return refusal
        body = {
            "campaign": campaign.name,
            "inputs_version": result.inputs_version,
            "stale": stale,
            "computed_at": result.computed_at,
            "agreement": result.report["agreement"],
        }
        return Response(body, headers={"X-Results-Stale": "1"} if stale else None)


class AgreementUploadView(EvaluationAPI, APIView):
    parser_classes = [StrictMultiPartParser, FormParser]

    @extend_schema(
        summary="Krippendorff's alpha of an uploaded CSV (item,rater,value) at a level of measurement",
        request={"multipart/form-data": s.AgreementUploadSerializer},
        responses={200: OpenApiTypes.OBJECT, **ERRORS},
    )
    def post(self, request):
        form = s.AgreementUploadSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        try:
            raw = data["file"].read().decode("utf-8")
        except UnicodeDecodeError:
            raise ValidationError({"file": ["the file is not UTF-8 text"]}) from None
        try:
            table = pd.read_csv(io.StringIO(raw), dtype={"item": str, "rater": str})
        except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
            raise ValidationError({"file": [f"cannot read the CSV: {exc}"]}) from None
        try:
            agreement.check_csv_columns(table.columns)
            report = agreement.agreement_report(
                table, data["level"], value_domain=data.get("domain"), bootstrap=data["bootstrap"], seed=data["seed"], with_raters=data["raters"]
            )
        except ValueError as exc:
            raise ValidationError({"file": [str(exc)]}) from None
        return Response(s.json_safe({"rows": len(table), **report.to_dict()}))


@extend_schema(
    summary="Select finalists by mean reciprocal rank over objective metrics (best entry per team, top N teams)",
    request=s.FinalistsRequestSerializer,
    responses={200: s.FinalistsResponseSerializer, **ERRORS, **NO_TEST_SET},
)
class FinalistsView(EvaluationAPI, APIView):
    def post(self, request, pk):
        test_set = get_object_or_404(TestSet, pk=pk)
        form = s.FinalistsRequestSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        finalists = select_finalists(test_set, data["metrics"], data["top"], lower_is_better=data["lower_is_better"])
        campaign = None
        if data.get("campaign"):
            campaign = create_finalist_campaign(data["campaign"], test_set, finalists, questions=data["questions"])
        rows = [
            {**{k: row[k] for k in ("rank", "team_id", "entry_id", "overall", "tied_at_cutoff")},
             "scores": [{k: sc[k] for k in ("metric", "value", "source")} for sc in row["scores"]]}
            for row in finalist_rows(finalists, data["metrics"])
        ]
        return Response({
            "finalists": rows, "left_out": finalists.attrs.get("left_out", []),
            "without_outputs": finalists.attrs.get("without_outputs", []), "campaign": campaign.pk if campaign else None,
        })


class HumanEvalUploadView(EvaluationAPI, APIView):
    parser_classes = [StrictMultiPartParser, FormParser]

    @extend_schema(
        summary="Import past human evaluations (DSTC9 layout, zipped) into a campaign, in the background; all or nothing",
        description="The zip's listing is checked at once (400 with the reason, nothing recorded); the members' contents are "
        "checked by the run, which stores every rating or none. Follow the run at `url` (also the Location header): "
        "it ends succeeded with `result` (what was stored) or failed with `error` (what to correct).",
        request={"multipart/form-data": s.HumanEvalUploadSerializer},
        parameters=[RUN_LOCATION],
        responses={202: s.CampaignRunSerializer, **ERRORS, **NOT_FOUND},
    )
    def post(self, request, pk):
        campaign = self.get_campaign(pk)
        form = s.HumanEvalUploadSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        try:
            run = start_human_eval_import(campaign, form.validated_data["file"], replace=form.validated_data["replace"], created_by=request.user)
        except EvaluationInputError as exc:
            raise ValidationError({"file": [str(exc)]}) from None
        run.refresh_from_db()  # where tasks run in-process the import has already run
        body = s.CampaignRunSerializer(run, context={"request": request}).data
        return accepted(request, body, body["url"])


class CampaignRunListView(EvaluationAPI, generics.ListAPIView):
    serializer_class = s.CampaignRunSerializer

    @extend_schema(
        summary="A campaign's background runs (human-evaluation imports, planner runs), newest first",
        responses={200: s.CampaignRunSerializer(many=True), **NOT_FOUND},
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        return campaign_selectors.campaign_runs(self.get_campaign(self.kwargs["pk"]))


class CampaignRunView(EvaluationAPI, APIView):
    @extend_schema(
        summary="One background run of a campaign (a human-evaluation import, a planner run): status, progress, result or error",
        responses={200: s.CampaignRunSerializer, 404: OpenApiResponse(s.EvaluationMessageSerializer, description="No such campaign, or no such run of it.")},
    )
    def get(self, request, pk, run_pk):
        run = get_object_or_404(campaign_selectors.campaign_runs(self.get_campaign(pk)), pk=run_pk)
        return Response(s.CampaignRunSerializer(run, context={"request": request}).data)


class TestSetListView(EvaluationAPI, APIView):
    parser_classes = [StrictMultiPartParser, FormParser]

    @extend_schema(summary="List test sets with their size, whether dialog contexts are stored, and their entry counts", responses={200: s.TestSetSerializer(many=True)})
    def get(self, request):
        return Response(s.TestSetSerializer(campaign_selectors.test_sets(), many=True).data)

    @extend_schema(
        summary="Upload a test set (DSTC9 Track 1 layout): labels.json with optional knowledge.json and logs.json, or one .zip; all or nothing",
        request={"multipart/form-data": s.TestSetUploadSerializer},
        responses={201: s.TestSetSerializer, **ERRORS},
    )
    def post(self, request):
        form = s.TestSetUploadSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        # A refusal (EvaluationInputError) is a 400 {"detail": reason} by EvaluationAPI; nothing was written.
        test_set = import_test_set_upload(
            data["challenge"], data["name"], labels=data.get("labels"), knowledge=data.get("knowledge"), logs=data.get("logs"), archive=data.get("archive")
        )
        return Response(s.TestSetSerializer(campaign_selectors.test_sets().get(pk=test_set.pk)).data, status=status.HTTP_201_CREATED)


class TestSetLogsView(EvaluationAPI, APIView):
    parser_classes = [StrictMultiPartParser, FormParser]

    @extend_schema(
        summary="Add or replace a test set's dialog contexts (logs.json, aligned with its labels)",
        request={"multipart/form-data": s.TestSetLogsUploadSerializer},
        responses={200: s.TestSetSerializer, **ERRORS, **NO_TEST_SET},
    )
    def post(self, request, pk):
        test_set = get_object_or_404(campaign_selectors.test_sets(), pk=pk)
        form = s.TestSetLogsUploadSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        import_test_set_logs_upload(test_set, form.validated_data["logs"])
        return Response(s.TestSetSerializer(campaign_selectors.test_sets().get(pk=pk)).data)


class EntriesUploadView(EvaluationAPI, APIView):
    parser_classes = [StrictMultiPartParser, FormParser]

    @extend_schema(
        summary="Upload a test set's entries as a .zip of <team>/<entry>.json, with optional objective scores (CSV); all or nothing",
        request={"multipart/form-data": s.EntriesUploadSerializer},
        responses={200: s.EntriesImportedSerializer, **ERRORS, **NO_TEST_SET},
    )
    def post(self, request, pk):
        test_set = get_object_or_404(TestSet, pk=pk)
        form = s.EntriesUploadSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        summary = import_entries_upload(
            test_set, data["archive"], scores=data.get("scores"), baseline_teams=data["baseline_teams"], ground_truth=data["ground_truth"]
        )
        return Response({"test_set": test_set.pk, **summary})


@extend_schema_view(
    get=extend_schema(summary="List dialog systems with their contract check and pause state"),
    post=extend_schema(
        summary="Register a dialog system; its contract check runs in the background",
        responses={201: s.DialogSystemSerializer, **ERRORS, 429: OpenApiResponse(s.EvaluationMessageSerializer, description="Past the organizer's contract checks a minute (QUORUM_LIMIT_SYSTEM_CHECKS_PER_MINUTE); `detail` says when to try again.")},
    ),
)
class DialogSystemListView(EvaluationAPI, generics.ListCreateAPIView):
    serializer_class = s.DialogSystemSerializer

    def get_queryset(self):
        return interactive_selectors.dialog_systems()

    def create(self, request, *args, **kwargs):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        refusal = limits.spend("system_checks", request.user.pk)
        if refusal is not None:
            raise Throttled(wait=refusal.retry_after, detail=refusal.message)
        system = register_system(**serializer.validated_data)
        return Response(self.get_serializer(system).data, status=status.HTTP_201_CREATED)


class InteractiveResultsView(EvaluationAPI, APIView):
    @extend_schema(
        summary="A chat job's interactive leaderboard: per system success, grounded success, final score and ratings with intervals, tie groups, rank ranges",
        description="Computed from the counted dialogs, as on the results page: chats flagged by the offensive-word filter count only once kept "
        "(`screening` says how many wait, were kept and were dropped); `status_lines` the run's state (dialogs collected of those "
        "planned, paused systems, the job still live; per system `failed_calls_not_counted` in dialogs that do not count, a claim that "
        "expired included), `unscored` the job's systems with no counted dialog and why; the same as the page's JSON download. Each "
        "system's `failed_calls` is the page's Failed calls (its calls that failed in the counted dialogs); `failed_turns` repeats it "
        "under its name before, for older clients. `rank` is the tie group's place (Tie-group rank), `rank_low`-`rank_high` the rank "
        "range; `rank_columns` says so in words.",
        responses={200: OpenApiTypes.OBJECT, 404: OpenApiResponse(s.EvaluationMessageSerializer, description="No such interactive (chat) job.")},
    )
    def get(self, request, pk):
        job = get_object_or_404(interactive_selectors.interactive_jobs(), pk=pk)
        board, _dialogs = interactive_selectors.interactive_board(job)
        return Response(s.json_safe(interactive_stats.to_json_dict(board)))


class FedResultsView(FormatParameter, EvaluationAPI, APIView):
    renderer_classes = [JSONRenderer, CSVRenderer]
    formats = ("json", "csv")

    @extend_schema(
        summary="A FED set's results: per system and question the mean with its 95% interval, and the raters' agreement per question",
        description="Served from the results stored for the set's counted answers (computed in the background once per state of the "
        "answers; nothing is computed on request): `computed_at` says when, `answers` from how many counted answers. When they are "
        "missing, or the answers have changed since (`stale`) or an older method computed them (`older_method`), a computation is asked "
        "for, `results_run` says how it stands and `note` says in words what is not current (empty when current). 409 before any "
        "results are stored. The interval is clustered by dialog and by rater "
        "(t with min(dialogs, raters) - 1 degrees of freedom, within the scale); agreement is Krippendorff's ordinal alpha with a "
        "bootstrap interval over items. Each question carries its `label` and its `coding` (\"1 = No, 2 = Somewhat, 3 = Yes\": "
        "the FED paper's 1-3, not the 0-2 of some loaders); `ci_clipped` is true where the interval ran past the scale and was cut at "
        "its end. At turn level the interval is clustered by response rather than dialog. `?format=csv` gives the page's CSV download "
        "(with a last column `note` on every row when the results are not current).",
        parameters=[OpenApiParameter("format", str, enum=["json", "csv"], description="json (default) or csv.")],
        responses={(200, "application/json"): OpenApiTypes.OBJECT, (200, "text/csv"): OpenApiTypes.STR, **ERRORS,
                   404: OpenApiResponse(s.EvaluationMessageSerializer, description="No such FED set."),
                   409: OpenApiResponse(s.EvaluationMessageSerializer, description="No results stored yet: their computation is asked for.")},
    )
    def get(self, request, pk):
        fed_set = get_object_or_404(FedSet.objects.select_related("job"), pk=pk)
        stored = fed_results.results_if_asked(fed_set, by=request.user)
        run = attempt_state(stored.run) if stored.run is not None else None
        if stored.shown is None and fed_set.job_id is not None:
            detail = "no results are stored for this set yet; their computation is asked for: try again when it has finished"
            return Response({"detail": detail, "results_run": run}, status=status.HTTP_409_CONFLICT)
        if request.accepted_renderer.format == "csv":
            return Response(results_csv(stored.results, stored.agreement, note=stored.note))
        shown = stored.shown
        body = {
            "fed_set": fed_set.pk, "name": fed_set.name, "level": fed_set.level, "job": fed_set.job_id,
            "computed_at": shown.computed_at if shown else None, "answers": shown.answers if shown else 0,
            "stale": stored.stale, "older_method": stored.older_method, "note": stored.note, "results_run": run,
            "results": stored.results, "agreement": stored.agreement,
        }
        return Response(s.json_safe(body))


def _report_state(report) -> dict | None:
    if report is None:
        return None
    return {"id": report.pk, "status": report.status, "done": report.done, "total": report.total, "created_at": report.created_at, "error": report.error}


class PairwiseRankingView(EvaluationAPI, APIView):
    NO_SUCH_JOB = {404: OpenApiResponse(s.EvaluationMessageSerializer, description="No such pairwise comparison job.")}

    @extend_schema(
        summary="A pairwise job's stored ranking report: Bradley-Terry rows, fragility, style-controlled ranking, position bias, judges' rank sets",
        description="Served from the report stored in the background when votes change (nothing is fitted on request): "
        "`computed_at` and `age_seconds` say how old it is, `votes` how many counted votes it read, `rows` strongest first "
        "(`row_order` says how: rows of one tie group share its rank and are listed by log-strength), `under_way` the "
        "recomputation queued or running (null when none), `failed` a failure newer than the report. `method` is the method "
        "that computed the report; `older_method` is true when it is older than today's (its rank ranges may contradict the "
        "Holm-adjusted pairwise decisions): a recomputation is then asked for (`under_way`) and `older_method_note` says so in "
        "words. `rank_columns` says what `rank` (the tie group's place) and `rank_low`-`rank_high` (the rank range) mean. "
        "409 before the first report.",
        responses={200: OpenApiTypes.OBJECT, 409: OpenApiResponse(s.EvaluationMessageSerializer, description="No ranking stored yet."), **NO_SUCH_JOB},
    )
    def get(self, request, pk):
        job = get_object_or_404(campaign_selectors.pairwise_jobs(), pk=pk)
        stored = campaign_selectors.stored_pairwise_report(job)
        if stored.older_method and recompute_pairwise_if_older(job, stored) is not stored.under_way:
            stored = campaign_selectors.stored_pairwise_report(job)  # the recomputation just asked for is `under_way`
        if stored.shown is None:
            detail = "no ranking has been stored for this job yet; POST here to compute it and try again when it is ready"
            return Response({"detail": detail, "under_way": _report_state(stored.under_way)}, status=status.HTTP_409_CONFLICT)
        shown, body = stored.shown, stored.body or {}
        return Response(s.json_safe({
            "job": job.pk, "name": job.name, "computed_at": shown.finished_at, "age_seconds": round((timezone.now() - shown.finished_at).total_seconds(), 1),
            "votes": shown.votes, "rows": body.get("rows", []), "row_order": bradley_terry.ROW_ORDER, "controls": body.get("controls"), "judge_sets": body.get("judge_sets", []),
            "under_way": _report_state(stored.under_way), "failed": _report_state(stored.failed),
            "method": shown.method, "older_method": stored.older_method, "older_method_note": stored.older_method_note,
            "rank_columns": report_format.RANK_COLUMNS_WORDS,
        }))

    @extend_schema(
        summary="Compute a pairwise job's ranking report now (in the background)",
        description="Answers 202 with the computation `under_way` (one already waiting is the one asked for); follow it at `url` "
        "(also the Location header) until `finished`: succeeded with `ranking_url`, or failed with `error`.",
        request=None, parameters=[location_header("The report's computation (`url`): GET it to follow it.")],
        responses={202: OpenApiTypes.OBJECT, **NO_SUCH_JOB},
    )
    def post(self, request, pk):
        job = get_object_or_404(campaign_selectors.pairwise_jobs(), pk=pk)
        report = request_pairwise_report(job, delay=0, created_by=request.user)
        follow = reverse("evaluation-api:pairwise-report", kwargs={"pk": job.pk, "report_pk": report.pk})
        body = {"status": "queued", "under_way": _report_state(report), "url": request.build_absolute_uri(follow)}
        return accepted(request, body, follow)


class PairwiseReportView(EvaluationAPI, APIView):
    @extend_schema(
        summary="One computation of a pairwise job's ranking report: status, progress, error, and the ranking once stored",
        responses={
            200: s.PairwiseReportSerializer,
            404: OpenApiResponse(
                s.EvaluationMessageSerializer,
                description="No such pairwise job, or no such report of it (an older report is removed once a newer one is stored: GET the ranking).",
            ),
        },
    )
    def get(self, request, pk, report_pk):
        job = get_object_or_404(campaign_selectors.pairwise_jobs(), pk=pk)
        report = get_object_or_404(campaign_selectors.pairwise_reports(job), pk=report_pk)
        return Response(s.PairwiseReportSerializer(report, context={"request": request}).data)


class GoalSetListView(EvaluationAPI, APIView):
    parser_classes = [StrictMultiPartParser, FormParser]

    @extend_schema(summary="List user goal sets (for interactive evaluation) with their goal counts and database domains", responses={200: s.GoalSetSerializer(many=True)})
    def get(self, request):
        return Response(s.GoalSetSerializer(interactive_selectors.goal_sets(), many=True).data)

    @extend_schema(
        summary="Import a goal set: MultiWOZ data.json goal fields or a JSONL of goals, with an optional per-domain entity database; all or nothing",
        request={"multipart/form-data": s.GoalSetUploadSerializer},
        responses={201: s.GoalSetSerializer, **ERRORS},
    )
    def post(self, request):
        form = s.GoalSetUploadSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        databases = {data["database_domain"]: data["database"].read()} if data.get("database") else {}
        goal_set = import_goals(name=data["name"], goals_file=data["goals"].read(), databases=databases)
        return Response(s.GoalSetSerializer(interactive_selectors.goal_sets().get(pk=goal_set.pk)).data, status=status.HTTP_201_CREATED)
