"""Objective scoring in the API: queue `score_entries` and follow its run, compare an uploaded
score.csv with the computed scores, check and score a DSTC6 Track 1 result file. Thin views over
`evaluation.campaigns.services.objective`; refusals are 400s with the reason."""
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser
from rest_framework.response import Response
from rest_framework.views import APIView

from evaluation.api.views import ERRORS, EvaluationAPI
from evaluation.campaigns import selectors as campaign_selectors
from evaluation.campaigns.services.objective import (
    DEFAULT_TOLERANCE,
    compare_score_csv,
    load_json_text,
    score_dstc6_results,
    start_scoring,
    upload_text,
)
from evaluation.models import ObjectiveScoringRun, TestSet
from quorum.api.accepted import FollowedRunFields, accepted, location_header
from quorum.api.parsers import StrictMultiPartParser
from quorum.api.strict import RefusesUnknownFields

NO_TEST_SET = {404: OpenApiResponse(OpenApiTypes.OBJECT, description="No such test set.")}


class ScoringRunSerializer(FollowedRunFields):
    progress = serializers.FloatField(read_only=True, help_text="Share of the entries scored, 0 to 1.")

    class Meta:
        model = ObjectiveScoringRun
        fields = ["id", "test_set", "status", "done", "total", "progress", "finished", "error", "summary", "created_at", "started_at", "finished_at", "url"]

    def run_path(self, run) -> str:
        return reverse("evaluation-api:test-set-scoring-run", kwargs={"pk": run.test_set_id, "run_pk": run.pk})


class ScoreComparisonSerializer(RefusesUnknownFields, serializers.Serializer):
    scores = serializers.FileField(help_text="score.csv: team_id,entry_id,<metric>,...; ids as folders (team3, entry0) or as published (3, 0).")
    tolerance = serializers.FloatField(
        required=False, default=DEFAULT_TOLERANCE, min_value=0, max_value=0.999,
        help_text="Largest difference between a computed and a published value counted as a match.",
    )


class Dstc6ScoreSerializer(RefusesUnknownFields, serializers.Serializer):
    test_set = serializers.FileField(help_text="The DSTC6 Track 1 test set: a JSON list of {dialog_id, candidates, answer: {candidate_id}}.")
    results = serializers.FileField(help_text="The result file: a JSON list of {dialog_id, lst_candidate_id: [{candidate_id, rank}]}.")


class ScoringView(EvaluationAPI, APIView):
    @extend_schema(summary="The latest objective scoring run of a test set, with its progress", responses={200: ScoringRunSerializer, **NO_TEST_SET})
    def get(self, request, pk):
        test_set = get_object_or_404(TestSet, pk=pk)
        run = campaign_selectors.scoring_runs(test_set).first()
        if run is None:
            return Response({"detail": "no scoring run yet; POST here to start one"}, status=status.HTTP_404_NOT_FOUND)
        return Response(ScoringRunSerializer(run, context={"request": request}).data)

    @extend_schema(
        summary="Compute the DSTC9 Track 1 metrics of every entry with outputs (in the background); they feed Eq. 2",
        description="Answers 202 with the run (the one under way, if the test set has one); follow it at `url` (also the "
        "Location header) until `finished`: succeeded with its `summary`, or failed with `error`.",
        request=None, parameters=[location_header("The scoring run (`url`): GET it to follow the run.")],
        responses={202: ScoringRunSerializer, **ERRORS, **NO_TEST_SET},
    )
    def post(self, request, pk):
        test_set = get_object_or_404(TestSet, pk=pk)
        run = start_scoring(test_set, created_by=request.user)
        run.refresh_from_db()
        body = ScoringRunSerializer(run, context={"request": request}).data
        return accepted(request, body, body["url"])


class ScoringRunView(EvaluationAPI, APIView):
    @extend_schema(
        summary="One objective scoring run of a test set: status, progress, summary or error",
        operation_id="evaluation_test_sets_scoring_run_retrieve",
        responses={200: ScoringRunSerializer, 404: OpenApiResponse(OpenApiTypes.OBJECT, description="No such test set, or no such run of it.")},
    )
    def get(self, request, pk, run_pk):
        test_set = get_object_or_404(TestSet, pk=pk)
        run = get_object_or_404(campaign_selectors.scoring_runs(test_set), pk=run_pk)
        return Response(ScoringRunSerializer(run, context={"request": request}).data)


class ScoreComparisonView(EvaluationAPI, APIView):
    parser_classes = [StrictMultiPartParser, FormParser]

    @extend_schema(
        summary="Compare an uploaded score.csv with the computed scores: differences per team, entry and metric",
        request={"multipart/form-data": ScoreComparisonSerializer}, responses={200: OpenApiTypes.OBJECT, **ERRORS, **NO_TEST_SET},
    )
    def post(self, request, pk):
        test_set = get_object_or_404(TestSet, pk=pk)
        form = ScoreComparisonSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        upload = form.validated_data["scores"]
        text = upload_text(upload)
        return Response(compare_score_csv(test_set, text, name=upload.name, tolerance=form.validated_data["tolerance"]))


class Dstc6ScoreView(EvaluationAPI, APIView):
    parser_classes = [StrictMultiPartParser, FormParser]

    @extend_schema(
        summary="Check a DSTC6 Track 1 result file (every dialog, every candidate ranked once, 1-indexed) and score it (precision@1/2/5)",
        request={"multipart/form-data": Dstc6ScoreSerializer}, responses={200: OpenApiTypes.OBJECT, **ERRORS},
    )
    def post(self, request):
        form = Dstc6ScoreSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        test_set, results = form.validated_data["test_set"], form.validated_data["results"]
        dialogs = load_json_text(upload_text(test_set), test_set.name)
        return Response(score_dstc6_results(dialogs, upload_text(results), name=results.name))
