"""The organizer REST API: thin views over the services and selectors.

Every route is for organizers only (class and object level). A refusal by a service (JobError,
ImportFailed, ExportError, VotingError, QualityError, GoldRequestError, a refused upload) becomes a 400 whose body
names the field to fix; a request refused because a run is under way (ExportUnderWay) is a 409 naming
the run and where to follow it, and so is a state change the job's state refuses (launch, pause,
finish: the crowd API's answer to the same refusal); a missing object is a 404.
"""
import tempfile
import zipfile
from pathlib import Path

from django.conf import settings
from django.http import FileResponse, Http404, JsonResponse
from django.shortcuts import get_object_or_404
from django.urls import Resolver404, resolve, reverse
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, status, viewsets
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import FormParser, JSONParser
from rest_framework.response import Response
from rest_framework.views import APIView

from quorum.api.accepted import accepted, location_header
from quorum.api.parsers import StrictMultiPartParser
from quorum.api.permissions import IsOrganizer
from quorum.api.query import RefusesUnknownQueryParameters
from quorum.lockout import lockout_response
from quorum.slashes import PermanentRedirectKeepingMethod

from .. import task_types
from ..exporters import ExportError
from ..models import ExportRun, ImportRun, JobCreationRun, QualityPolicy, Worker
from ..models import Response as ResponseRow
from ..selectors import quality as quality_selectors
from ..selectors.dashboard import corpora_with_counts, jobs_with_progress
from ..selectors.flags import flag_run_state, flagged_workers, stored_flags
from ..selectors.gold import gold_items
from ..selectors.jobs import job_progress
from ..selectors.reliability import worker_reliability_table
from ..selectors.review_decisions import decision_records
from ..services.exports import ExportUnderWay, start_export
from ..services.flag_runs import request_flag_run
from ..services.gold import GoldRequestError, add_gold_from_item
from ..services.import_uploads import UploadError, import_error_field, start_upload_import
from ..services.imports import ImportFailed
from ..services.job_creation import start_job_creation
from ..services.jobs import JobError, change_state
from ..services.payload_jobs import create_payload_job, create_payload_job_from_file
from ..services.quality import QualityError, override_verdict, set_quality, unblock_worker
from ..services.review_undo import undo_decision, undo_decisions
from ..services.voting import VotingError, disable_voting, enable_voting, vote_job_of
from . import review_serializers as rs
from . import serializers as s
from .reliability_serializers import WorkerReliabilitySerializer

ERRORS = {400: OpenApiResponse(description="The request cannot be carried out; the body names the field to fix.")}


# A body whose fields are all optional is documented as JSON: an empty multipart or form body reads
# as "no fields" (the defaults), so only JSON lets a client say something that is not an object.
def json_body(serializer):
    return {"application/json": serializer}


NOT_FOUND = {404: OpenApiResponse(s.MessageSerializer, description="No such object.")}
STATE_REFUSED = {409: OpenApiResponse(
    s.MessageSerializer, description="The job's state does not allow it (or a launch check, such as the crowd budget, refused); `detail` says why and nothing changed.",
)}


class OrganizerAPI(RefusesUnknownQueryParameters):
    """Organizers only; service refusals become 400s that name the field."""

    permission_classes = [IsOrganizer]
    #: Request fields a quality service's message may name (see service_error_fields).
    error_fields: tuple = ()

    def handle_exception(self, exc):
        if isinstance(exc, JobError):
            return Response(exc.field_errors(), status=status.HTTP_400_BAD_REQUEST)
        if isinstance(exc, UploadError):
            return Response({exc.field: [str(exc)]}, status=status.HTTP_400_BAD_REQUEST)
        if isinstance(exc, ImportFailed):
            return Response({import_error_field(exc): [str(exc)]}, status=status.HTTP_400_BAD_REQUEST)
        if isinstance(exc, ExportUnderWay):
            url = self.request.build_absolute_uri(reverse("api:export-detail", kwargs={"pk": exc.run.pk}))
            return Response({"detail": str(exc), "run": exc.run.pk, "url": url}, status=status.HTTP_409_CONFLICT)
        if isinstance(exc, ExportError):
            return Response({exc.field: [str(exc)]}, status=status.HTTP_400_BAD_REQUEST)
        if isinstance(exc, GoldRequestError):
            return Response(exc.as_api_errors(), status=status.HTTP_400_BAD_REQUEST)
        if isinstance(exc, (VotingError, QualityError)):
            return Response(service_error_fields(str(exc), getattr(self, "error_fields", ())), status=status.HTTP_400_BAD_REQUEST)
        return super().handle_exception(exc)


def service_error_fields(message: str, fields) -> dict:
    """A quality service's message ("max_rounds must be ...; ...") as {field: [messages]}.

    Each part goes under the field it starts with when that is a field of the request, else under
    non_field_errors.
    """
    out: dict[str, list[str]] = {}
    for part in (p.strip() for p in message.split(";")):
        if part:
            name = part.split(" ", 1)[0]
            out.setdefault(name if name in fields else "non_field_errors", []).append(part)
    return out


@extend_schema_view(
    list=extend_schema(summary="List corpora with their dialog and turn counts"),
    retrieve=extend_schema(summary="One corpus with its dialog and turn counts", responses={200: s.CorpusSerializer, **NOT_FOUND}),
)
class CorpusViewSet(OrganizerAPI, mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin, viewsets.GenericViewSet):
    """Corpora of dialogs; a new one is uploaded as files and imported in the background."""

    serializer_class = s.CorpusSerializer
    parser_classes = [StrictMultiPartParser, FormParser]

    def get_queryset(self):
        return corpora_with_counts()

    @extend_schema(
        summary="Upload a corpus; it is imported in the background",
        request={"multipart/form-data": s.CorpusUploadSerializer},
        description="Answers 202 with the import run; GET its `url` (also the Location header) until `finished`: "
        "succeeded with `corpus_url`, or failed with `error` (what to correct).",
        parameters=[location_header("The import run (`url`): GET it to follow the import.")],
        responses={202: s.ImportRunSerializer, **ERRORS},
    )
    def create(self, request, *args, **kwargs):
        upload = s.CorpusUploadSerializer(data=request.data)
        upload.is_valid(raise_exception=True)
        run = start_upload_import(
            name=upload.validated_data["name"],
            source_format=upload.validated_data["source_format"],
            files=upload.files(),
            created_by=request.user,
            language=upload.validated_data["language"],
        )
        run.refresh_from_db()  # without a broker the import has already run
        body = s.ImportRunSerializer(run, context={"request": request}).data
        return accepted(request, body, body["url"])


@extend_schema_view(
    list=extend_schema(summary="List corpus import runs, newest first"),
    retrieve=extend_schema(summary="One import run: status, progress and error", responses={200: s.ImportRunSerializer, **NOT_FOUND}),
)
class ImportRunViewSet(OrganizerAPI, viewsets.ReadOnlyModelViewSet):
    """Corpus imports: pending, running, succeeded (with the corpus) or failed (with the reason)."""

    serializer_class = s.ImportRunSerializer
    queryset = ImportRun.objects.order_by("-created_at", "-id")


@extend_schema_view(
    list=extend_schema(summary="List job creations (corpus jobs made in the background), newest first"),
    retrieve=extend_schema(
        summary="One job creation: status, progress, then the job made or why nothing was",
        responses={200: s.JobCreationRunSerializer, **NOT_FOUND},
    ),
)
class JobCreationRunViewSet(OrganizerAPI, viewsets.ReadOnlyModelViewSet):
    """Creations of corpus jobs asked for with POST /api/jobs/ (or the job form). Like jobs, imports
    and exports, every organizer's are every organizer's to follow: the pages show them alike."""

    serializer_class = s.JobCreationRunSerializer
    queryset = JobCreationRun.objects.select_related("job").order_by("-created_at", "-id")


@extend_schema_view(
    list=extend_schema(summary="List jobs"),
    retrieve=extend_schema(summary="One job with its progress", responses={200: s.JobDetailSerializer, **NOT_FOUND}),
)
class JobViewSet(OrganizerAPI, mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin, viewsets.GenericViewSet):
    """Annotation jobs: created as drafts from a corpus, then launched, paused and finished."""

    parser_classes = [JSONParser, FormParser, StrictMultiPartParser]

    def get_queryset(self):
        return jobs_with_progress().prefetch_related("annotators")

    def get_serializer_class(self):
        if self.action == "retrieve":
            return s.JobDetailSerializer
        return s.JobSerializer

    @extend_schema(
        summary="Create a draft job: over a corpus's turns in the background (202), from payloads in the call (201)",
        request=s.JobCreateSerializer,
        description="A type built from corpus turns: the request is checked at once (a bad field is a 400 naming it, "
        "nothing recorded), then the job is made in the background, with all its items and slots or not at all. "
        "Answers 202 with the creation run; GET its `url` (also the Location header) until `finished`: succeeded "
        "with `job` and `job_url`, or failed with `error` (and `error_field`), nothing made. "
        "A type built from payloads (`payloads` given, or a corpus's knowledge): its items are written in the call, "
        "and it answers 201 with the job.",
        parameters=[location_header("The job's creation run (`url`): GET it to follow the creation.")],
        responses={202: s.JobCreationRunSerializer, 201: s.JobSerializer, **ERRORS},
    )
    def create(self, request, *args, **kwargs):
        form = s.JobCreateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = dict(form.validated_data)
        selection = s.SelectionSerializer.to_selection(data.pop("selection", None) or {})
        if isinstance(task_types.get(data["task_type"]), task_types.FromPayloads):
            # Payloads are the request's own (or a corpus's knowledge file): as many rows as it gave.
            corpus = data.pop("corpus")
            if "payloads" in data:
                job = create_payload_job(created_by=request.user, **data)
            else:
                job = create_payload_job_from_file(created_by=request.user, corpus=corpus, **data)
            job = self.get_queryset().get(pk=job.pk)
            return Response(s.JobSerializer(job, context={"request": request}).data, status=status.HTTP_201_CREATED)
        # A corpus's turns: over 100,000 of them held the call 15-41 s (docs/measurements.md).
        run = start_job_creation(selection=selection, created_by=request.user, **data)
        run.refresh_from_db()  # without a broker the job has already been made (or refused)
        body = s.JobCreationRunSerializer(run, context={"request": request}).data
        return accepted(request, body, body["url"])

    def _change_state(self, request, name):
        try:
            job = change_state(self.get_object(), name)
        except JobError as exc:
            # The job's state (or a launch check such as the crowd budget) refuses it: a conflict, as
            # the crowd API answers the same refusal; `state` keeps the field the form reads.
            return Response({"detail": str(exc), **exc.field_errors()}, status=status.HTTP_409_CONFLICT)
        return Response(s.JobSerializer(self.get_queryset().get(pk=job.pk), context={"request": request}).data)

    @extend_schema(summary="Launch a draft job, or resume a paused one", request=None, responses={200: s.JobSerializer, **STATE_REFUSED, **NOT_FOUND})
    @action(detail=True, methods=["post"])
    def launch(self, request, pk=None):
        return self._change_state(request, "launch")

    @extend_schema(summary="Pause a live job", request=None, responses={200: s.JobSerializer, **STATE_REFUSED, **NOT_FOUND})
    @action(detail=True, methods=["post"])
    def pause(self, request, pk=None):
        return self._change_state(request, "pause")

    @extend_schema(summary="Finish a live or paused job", request=None, responses={200: s.JobSerializer, **STATE_REFUSED, **NOT_FOUND})
    @action(detail=True, methods=["post"])
    def finish(self, request, pk=None):
        return self._change_state(request, "finish")

    @extend_schema(summary="How far the job is", responses={200: s.JobProgressSerializer, **NOT_FOUND})
    @action(detail=True, methods=["get"], pagination_class=None)
    def progress(self, request, pk=None):
        return Response(s.JobProgressSerializer.describe(job_progress(self.get_object())))

    @extend_schema(
        methods=["GET"], summary="The job's export runs, newest first", request=None,
        responses={200: s.ExportRunSerializer(many=True), **NOT_FOUND},
    )
    @extend_schema(
        methods=["POST"], summary="Export the job's results in the background", request=json_body(s.ExportRequestSerializer),
        description="Answers 202 with the export run; GET its `url` (also the Location header) until `finished`: "
        "succeeded with its `files` and `zip_url` to download, or failed with `error`.",
        parameters=[location_header("The export run (`url`): GET it to follow the export.")],
        responses={
            202: s.ExportRunSerializer, **ERRORS, **NOT_FOUND,
            409: OpenApiResponse(s.RunUnderWaySerializer, description="A different speech-error export of the job is under way: follow it at `url`, then ask again."),
        },
    )
    @action(detail=True, methods=["get", "post"], serializer_class=s.ExportRunSerializer, pagination_class=None)
    def exports(self, request, pk=None):
        job = self.get_object()
        if request.method == "GET":
            runs = job.export_runs.order_by("-created_at", "-id")
            return Response(s.ExportRunSerializer(runs, many=True, context={"request": request}).data)
        asked = s.ExportRequestSerializer(data=request.data)
        asked.is_valid(raise_exception=True)
        run = start_export(job, created_by=request.user, **asked.validated_data)
        run.refresh_from_db()  # without a broker the export has already run
        body = s.ExportRunSerializer(run, context={"request": request}).data
        return accepted(request, body, body["url"])


    # --- quality control ---

    @extend_schema(
        summary="Krippendorff's alpha per question of the job, over the responses that count",
        description="One table per question the task type measures agreement on (units: items, coders: workers), at the "
        "task type's level of measurement; an empty list for free-text work such as rewrites.",
        responses={200: s.QuestionAgreementSerializer(many=True), **NOT_FOUND},
    )
    @action(detail=True, methods=["get"], serializer_class=s.QuestionAgreementSerializer, pagination_class=None)
    def agreement(self, request, pk=None):
        job = self.get_object()
        return Response([a.__dict__ for a in quality_selectors.job_agreement(job)])

    @extend_schema(
        summary="Per worker and role, the reliability model the last flag run stored",
        description="Expected accuracy and spammer score with 95% intervals (Dawid-Skene over the job's votes, pairwise "
        "choices and categorical answers, and over the votes on its responses); empty before a flag run has fitted one.",
        responses={200: WorkerReliabilitySerializer(many=True), **NOT_FOUND},
    )
    @action(detail=True, methods=["get"], serializer_class=WorkerReliabilitySerializer, pagination_class=None)
    def reliability(self, request, pk=None):
        job = self.get_object()
        return Response(worker_reliability_table(job))  # stored by the flag run: nothing is fitted here

    def _voting(self, request, job, code=status.HTTP_200_OK):
        summary = quality_selectors.voting_summary(job)
        policy = QualityPolicy.objects.filter(job=job).first()
        return Response(s.VotingSummarySerializer.describe(summary, policy, vote_job_of(job)), status=code)

    @extend_schema(methods=["GET"], summary="The job's voting settings and summary", request=None,
                   responses={200: s.VotingSummarySerializer, **NOT_FOUND})
    @extend_schema(
        methods=["POST"], summary="Turn voting on with its settings, or off (enabled: false)",
        request=json_body(s.VotingSettingsSerializer), responses={200: s.VotingSummarySerializer, **ERRORS, **NOT_FOUND},
    )
    @action(detail=True, methods=["get", "post"], serializer_class=s.VotingSettingsSerializer, pagination_class=None,
            error_fields=("votes_per_response", "against_threshold", "max_rounds", "on_voted_down", "decision_rule", "model_sure", "model_max_votes", "vote_reward"))
    def voting(self, request, pk=None):
        job = self.get_object()
        if request.method == "POST":
            form = s.VotingSettingsSerializer(data=request.data)
            form.is_valid(raise_exception=True)
            data = dict(form.validated_data)
            if data.pop("enabled"):
                enable_voting(job, **data)
            else:
                disable_voting(job)
        return self._voting(request, job)

    @extend_schema(
        summary="The job's review list: responses with their evidence, and reviewed items with rounds and votes",
        parameters=[OpenApiParameter("all", OpenApiTypes.BOOL, description="true: every response, not only those with evidence; false (the default): those with evidence.")],
        responses={200: s.JobReviewsSerializer, **ERRORS, **NOT_FOUND},
    )
    @action(detail=True, methods=["get"], serializer_class=s.JobReviewsSerializer, pagination_class=None, query_parameters=("all",))
    def reviews(self, request, pk=None):
        job = self.get_object()
        every = request.query_params.get("all", "false").lower()
        if every not in ("true", "false"):
            raise ValidationError({"all": [f"give true or false, not {every[:40]!r}"]})
        every = every == "true"
        flags = stored_flags(job)  # as the last flag run stored them: never computed in the request
        body = {
            "responses": quality_selectors.review_list(job, flagged_only=not every, flags=flags),
            "items": quality_selectors.item_reviews(job),
            "flags": {
                "computed_at": flags.computed_at, "responses_seen": flags.responses_seen, "workers": flagged_workers(flags),
                "run": flag_run_state(job, flags),
            },
        }
        return Response(s.JobReviewsSerializer(body).data)

    @extend_schema(methods=["GET"], summary="The job's gold, onboarding and flag settings", request=None,
                   responses={200: s.QualitySettingsSerializer, **NOT_FOUND})
    @extend_schema(methods=["POST"], summary="Change some of the job's gold, onboarding and flag settings",
                   request=json_body(s.QualitySettingsSerializer), responses={200: s.QualitySettingsSerializer, **ERRORS, **NOT_FOUND})
    @action(detail=True, methods=["get", "post"], serializer_class=s.QualitySettingsSerializer, pagination_class=None,
            error_fields=s.QUALITY_SETTINGS)
    def quality(self, request, pk=None):
        job = self.get_object()
        if request.method == "POST":
            form = s.QualitySettingsSerializer(data=request.data)
            form.is_valid(raise_exception=True)
            policy = set_quality(job, **form.validated_data)
        else:
            policy = QualityPolicy.objects.filter(job=job).first() or QualityPolicy(job=job)
        return Response(s.QualitySettingsSerializer(policy).data)

    @extend_schema(methods=["GET"], summary="The job's gold items with their pass rates", request=None,
                   responses={200: s.GoldItemSerializer(many=True), **NOT_FOUND})
    @extend_schema(
        methods=["POST"], summary="Add a gold item: a copy of an item of the job with its known answer",
        request=s.GoldItemCreateSerializer, responses={201: s.GoldItemSerializer, **ERRORS, **NOT_FOUND},
    )
    @action(detail=True, methods=["get", "post"], serializer_class=s.GoldItemCreateSerializer, pagination_class=None)
    def gold(self, request, pk=None):
        job = self.get_object()
        if request.method == "GET":
            return Response(s.GoldItemSerializer([row.as_dict() for row in gold_items(job)], many=True).data)
        form = s.GoldItemCreateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        item = add_gold_from_item(job, item_id=form.validated_data["item"], gold=form.validated_data["gold"])
        row = next(r for r in gold_items(job) if r.item_id == item.pk)
        return Response(s.GoldItemSerializer(row.as_dict()).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        summary="Recompute the job's worker flags now, in the background (reviews/ shows the stored ones, when they were computed, and how the run stands)",
        request=None,
        parameters=[location_header("The job's review list: its `flags.run` says whether the run is queued, running or failed (and why); its `flags.computed_at` moves past the 202's `computed_at` once the new flags are stored.")],
        responses={202: s.FlagsQueuedSerializer, **NOT_FOUND},
    )
    @action(detail=True, methods=["post"], serializer_class=s.FlagsQueuedSerializer, pagination_class=None)
    def flags(self, request, pk=None):
        job = self.get_object()
        request_flag_run(job, by=request.user)
        # The run's record (FlagRun) is the job's latest attempt, not a resource of its own: the one to
        # follow is the review list, whose `flags.run` says how the attempt stands and whose
        # `flags.computed_at` moves past the value given here once the new flags are stored.
        reviews = reverse("api:job-reviews", kwargs={"pk": job.pk})
        stored = stored_flags(job, with_responses=False)
        body = {
            "job": job.pk, "computed_at": stored.computed_at, "run": flag_run_state(job, stored),
            "detail": f"Recomputing flags; GET {reviews} says how the run stands (flags.run) and shows the flags once stored (flags.computed_at).",
            "url": request.build_absolute_uri(reviews),
        }
        return accepted(request, s.FlagsQueuedSerializer(body).data, reviews)


    @extend_schema(
        summary="The job's reviewer decisions (accept, reject, exclude), newest first, each with its undo if it was undone",
        request=None, responses={200: rs.DecisionSerializer(many=True), **NOT_FOUND},
    )
    @action(detail=True, methods=["get"], url_path="review/decisions", serializer_class=rs.DecisionSerializer)
    def review_decisions(self, request, pk=None):
        job = self.get_object()
        page = self.paginate_queryset(decision_records(job))
        return self.get_paginated_response(rs.DecisionSerializer(page, many=True).data)

    @extend_schema(
        summary="Undo several decisions with one reason (as the review decisions page does); each that stands says why, the others go on",
        operation_id="jobs_review_decisions_undo_many", request=rs.BulkUndoRequestSerializer,
        responses={200: rs.BulkUndoSerializer, **ERRORS, **NOT_FOUND},
    )
    @action(detail=True, methods=["post"], url_path="review/decisions/undo", serializer_class=rs.BulkUndoRequestSerializer,
            pagination_class=None, error_fields=("decisions", "reason"))
    def undo_review_decisions(self, request, pk=None):
        job = self.get_object()
        form = rs.BulkUndoRequestSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        results = undo_decisions(job, form.validated_data["decisions"], reason=form.validated_data["reason"], by=request.user)
        body = {"undone": sum(r.ok for r in results), "results": [vars(r) for r in results]}
        return Response(rs.BulkUndoSerializer(body).data)

    @extend_schema(
        summary="Undo a reviewer's decision: its response goes back to its state before, with the reason in its audit trail",
        operation_id="jobs_review_decisions_undo_one",
        parameters=[OpenApiParameter("decision_id", OpenApiTypes.INT, OpenApiParameter.PATH, description="A decision of this job (`id` in review/decisions/).")],
        request=rs.UndoRequestSerializer,
        responses={
            200: rs.DecisionSerializer, **ERRORS, **NOT_FOUND,
            409: OpenApiResponse(rs.UndoRefusedSerializer, description="The decision stands (undone already, replaced, moved on, re-collected, or paid at the crowd); the body says why and what to do."),
        },
    )
    @action(detail=True, methods=["post"], url_path=r"review/decisions/(?P<decision_id>[0-9]+)/undo",
            serializer_class=rs.UndoRequestSerializer, pagination_class=None)
    def undo_review_decision(self, request, pk=None, decision_id=None):
        job = self.get_object()
        decision = get_object_or_404(decision_records(job), pk=decision_id)
        form = rs.UndoRequestSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        try:
            undo_decision(decision, reason=form.validated_data["reason"], by=request.user)
        except QualityError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(rs.DecisionSerializer(decision_records(job).get(pk=decision.pk)).data)


@extend_schema_view(
    list=extend_schema(summary="List export runs, newest first"),
    retrieve=extend_schema(summary="One export run: status, progress, error and files", responses={200: s.ExportRunSerializer, **NOT_FOUND}),
)
class ExportRunViewSet(OrganizerAPI, viewsets.ReadOnlyModelViewSet):
    """Exports of jobs' results; a finished run lists its files for download."""

    serializer_class = s.ExportRunSerializer
    queryset = ExportRun.objects.order_by("-created_at", "-id")

    @extend_schema(
        summary="Download one file of a finished export",
        parameters=[OpenApiParameter("name", OpenApiTypes.STR, OpenApiParameter.PATH, description="A name from the run's files.")],
        responses={(200, "application/octet-stream"): OpenApiTypes.BINARY, **NOT_FOUND},
    )
    def download(self, request, pk=None, name=None):
        run = self.get_object()
        return FileResponse(open(export_file_path(run, name), "rb"), as_attachment=True, filename=download_name(run, name))

    @extend_schema(
        summary="Download every file of a finished export as one zip",
        responses={(200, "application/zip"): OpenApiTypes.BINARY, **NOT_FOUND},
    )
    def download_zip(self, request, pk=None):
        run = self.get_object()
        if not run.files:
            raise Http404("This export has no files (yet).")
        # The files exist already (the export task wrote them); this only packs them, into a spooled
        # temporary file so a large export is not held in memory. Stored, not compressed: the
        # CPU-heavy step stays out of the request, and the variant JSON files are what they are.
        out = tempfile.SpooledTemporaryFile(max_size=ZIP_IN_MEMORY_BYTES)
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as archive:
            for name in run.files:
                archive.write(export_file_path(run, name), arcname=f"job-{run.job_id}-export-{run.pk}/{name}")
        out.seek(0)
        return FileResponse(out, as_attachment=True, filename=f"job-{run.job_id}-export-{run.pk}.zip", content_type="application/zip")


ZIP_IN_MEMORY_BYTES = 8 * 1024 * 1024  # a larger zip spills to a temporary file


def download_name(run: ExportRun, name: str) -> str:
    """A download's file name that says what it is: the job and the variant, since every variant's
    file is called data.json in its own folder ("paraphrase/data.json" -> "job-3-paraphrase-data.json")."""
    return f"job-{run.job_id}-" + name.replace("/", "-").replace("\\", "-")


def export_file_path(run: ExportRun, name: str) -> Path:
    """The file `name` of a run, if the run lists it and it lies inside the run's directory; else 404."""
    if not run.directory or name not in (run.files or []):
        raise Http404("This export has no file of that name.")
    directory = Path(run.directory)
    if not directory.is_absolute():
        directory = Path(settings.QUORUM_EXPORT_DIR) / directory
    directory = directory.resolve()
    path = (directory / name).resolve()
    if not path.is_relative_to(directory) or not path.is_file():
        raise Http404("This export has no file of that name.")
    return path


class TokenView(RefusesUnknownQueryParameters, ObtainAuthToken):
    """DRF's token view, with both of its answers in the schema."""

    @extend_schema(
        summary="Exchange a username and password for an API token",
        request=AuthTokenSerializer,
        responses={
            200: OpenApiResponse(OpenApiTypes.OBJECT, description='{"token": "..."}'),
            400: OpenApiResponse(OpenApiTypes.OBJECT, description="Wrong or missing credentials; the body says which."),
            415: OpenApiResponse(OpenApiTypes.OBJECT, description="The body is not JSON, a form or multipart; the body says which type was sent."),
            429: OpenApiResponse(OpenApiTypes.OBJECT, description="Too many failed attempts for this account or from this address; `detail` says when to try again."),
        },
    )
    def post(self, request, *args, **kwargs):
        try:
            return super().post(request, *args, **kwargs)
        except ValidationError:
            # django-axes marks DRF's request, which its middleware does not see: answer the lockout here.
            if getattr(request, "axes_locked_out", False):
                return lockout_response(request)
            raise


@csrf_exempt  # it changes nothing; a POST to a wrong address deserves the 404, not a CSRF page
def unknown_api_address(request, rest=""):
    """Any /api/ address no route matches (an id that is not a number, a misspelt path): a JSON
    404 like every other API refusal, not Django's HTML page. A path that only lacks its final
    slash is redirected with a 308 that keeps the method and body, as Quorum's APPEND_SLASH does
    (quorum.slashes) without this catch-all."""
    if not request.path.endswith("/"):
        try:
            match = resolve(request.path + "/")
        except Resolver404:
            match = None
        if match is not None and match.func is not unknown_api_address:
            return PermanentRedirectKeepingMethod(request.get_full_path(force_append_slash=True))
    return JsonResponse({"detail": "No such API address; /api/schema/ lists them."}, status=404)


class TaskTypeListView(OrganizerAPI, APIView):
    """The kinds of work a job can ask for, with the settings each one takes."""

    @extend_schema(summary="Task types with their settings, defaults and help", responses=s.TaskTypeSerializer(many=True))
    def get(self, request):
        kinds = sorted(task_types.registry().values(), key=lambda k: k.key)
        return Response([s.TaskTypeSerializer.describe(kind) for kind in kinds])


class ResponseOverrideView(OrganizerAPI, APIView):
    """A reviewer's decision on one response, replacing an automatic verdict (vote, checks, gold, flags)."""

    error_fields = ("status", "check", "reason", "recollect")

    @extend_schema(
        summary="Override the automatic verdict on a response; the reason is required",
        request=s.OverrideSerializer, responses={200: s.CheckOverrideSerializer, **ERRORS, **NOT_FOUND},
    )
    def post(self, request, pk):
        response = get_object_or_404(ResponseRow, pk=pk)
        self.check_object_permissions(request, response)
        form = s.OverrideSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        record = override_verdict(response, by=request.user, **form.validated_data)
        return Response(s.CheckOverrideSerializer(record).data)


class WorkerQualityView(OrganizerAPI, APIView):
    """A worker's quality record per job: flags with their evidence, gold answers, standing."""

    @extend_schema(summary="A worker's flags, gold record and standing, per job", responses={200: s.WorkerQualitySerializer, **NOT_FOUND})
    def get(self, request, pk):
        worker = get_object_or_404(Worker, pk=pk)
        self.check_object_permissions(request, worker)
        body = {"id": worker.pk, "provider": worker.provider, "external_id": worker.external_id,
                "jobs": quality_selectors.worker_quality(worker)}
        return Response(s.WorkerQualitySerializer(body).data)


class WorkerUnblockView(OrganizerAPI, APIView):
    """Let a soft-blocked worker work on a job again; their gold record is kept."""

    error_fields = ("job",)

    @extend_schema(summary="Unblock a worker soft-blocked on a job", request=s.UnblockSerializer,
                   responses={200: s.StandingSerializer, **ERRORS, **NOT_FOUND})
    def post(self, request, pk):
        worker = get_object_or_404(Worker, pk=pk)
        self.check_object_permissions(request, worker)
        form = s.UnblockSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        try:
            standing = unblock_worker(worker, form.validated_data["job"], by=request.user)
        except QualityError as exc:
            return Response({"job": [str(exc)]}, status=status.HTTP_400_BAD_REQUEST)
        return Response(s.StandingSerializer(standing).data)
