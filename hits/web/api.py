"""Organizer API for a job's crowd (DRF, organizers only). Thin: validate, call a service, answer.

GET    crowd/jobs/<id>/            settings, estimate (fees, hourly pay), budget, postings, assignments, payments
PUT    crowd/jobs/<id>/            choose the provider, set the budget, requirements and provider options
POST   crowd/jobs/<id>/launch/     launch on the crowd; 409 when over budget (nothing changes); 202 naming crowd/jobs/<id>/
GET    crowd/jobs/<id>/assignments/   the job's provider assignments
POST   crowd/jobs/<id>/settle/     {"action": approve|reject|soft_reject, "assignments": [...], "message": ...}
POST   crowd/jobs/<id>/bonus/      {"bonuses": [{"assignment": id, "amount": "0.25", "reason": "..."}]}
POST   crowd/jobs/<id>/reconcile/  enqueue a reconciliation now; 202 naming crowd/jobs/<id>/

Each provider's settings are fields of the PUT body made from its option schema
(`hits/providers/<provider>/options.py`: MTurk's `sandbox`, Prolific's `prolific_fee_rate`), and its
requirement options are keys of `requirements`, as before. The serializer parses types only;
`configure_crowd` checks the values and a refusal is a 400 whose `errors` name each field. The GET
gives the job's provider's settings under `provider_options` and, as before, under their own names;
a provider's settings are no longer shown for a job on another provider.
"""
from decimal import Decimal

from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Job
from annotation.services.jobs import JobError
from quorum.api.accepted import accepted, location_header
from quorum.api.permissions import IsOrganizer
from quorum.api.query import RefusesUnknownQueryParameters
from quorum.api.strict import RefusesUnknownFields

from .. import providers
from ..models import JobCrowdConfig, ProviderAssignment
from ..providers import Kind, Option
from ..selectors.crowd import crowd_overview
from ..services.config import CrowdConfigError, configure_crowd
from ..services.payments import (
    approve_assignments,
    bonus_assignments,
    reject_assignments,
    rejection_refusal,
    soft_reject_assignments,
)
from ..services.postings import BudgetExceeded, launch_crowd_job
from ..services.reconcile import request_reconciliation

MAX_BULK = 1000

# Every status each operation answers with, for the schema (a client, and the fuzz test, holds
# the API to it).
_BODY = OpenApiTypes.OBJECT
REFUSED = {400: OpenApiResponse(_BODY, description="The request cannot be carried out; the body names the field and the reason.")}
NO_JOB = {404: OpenApiResponse(_BODY, description="No such job.")}
CONFLICT = {409: OpenApiResponse(_BODY, description="Over budget, or the job cannot go to the crowd now; the body says why.")}


_OPTION_FIELDS = {
    Kind.SWITCH: lambda: serializers.BooleanField(),
    Kind.WHOLE: lambda: serializers.IntegerField(),
    Kind.DECIMAL: lambda: serializers.DecimalField(max_digits=None, decimal_places=None),
    Kind.TEXT: lambda: serializers.CharField(allow_blank=True),
    Kind.CODES: lambda: serializers.ListField(child=serializers.CharField()),
    Kind.JSON: lambda: serializers.JSONField(),
}


def option_field(option: Option) -> serializers.Field:
    """A body field that reads an option's type; what values are allowed is the service's to say."""
    field = _OPTION_FIELDS[option.kind]()
    limits = option.limits()
    field.required, field.help_text = False, f"{option.help} Allowed: {limits}." if limits else option.help
    return field


def requirements_help() -> str:
    keys = "; ".join(
        f"{name} ({option.help.rstrip('.')})" for name, option in providers.all_options().items() if option.requirement
    )
    return (
        "Who may take the work: an object of requirement keys and their values. Every provider: allow_list "
        f"(provider worker ids allowed to work). The providers' own: {keys}."
    )


class CrowdConfigSerializer(RefusesUnknownFields, serializers.Serializer):
    """The shared settings, and every provider's settings made from its option schema (`get_fields`)."""

    provider = serializers.ChoiceField(choices=providers.keys(), required=False, help_text="The crowd the job is posted to.")
    budget = serializers.DecimalField(
        max_digits=12, decimal_places=2, required=False, allow_null=True,
        help_text="Most the job may spend, fees included; null for no limit (in-house work only).",
    )
    minutes_per_assignment = serializers.DecimalField(
        max_digits=6, decimal_places=2, required=False, help_text="Expected working time of one assignment (at least 0.1), for pay and estimates."
    )
    auto_approval_days = serializers.IntegerField(
        required=False, help_text="Days (1 to 30) after which the provider approves a submission nobody settled."
    )
    assignments_per_posting = serializers.IntegerField(
        required=False, help_text="Workers (1 to 100) one posting (an MTurk HIT) admits."
    )
    review_hours = serializers.IntegerField(
        required=False, help_text=JobCrowdConfig._meta.get_field("review_hours").help_text + " From 0 to 720.",
    )
    lifetime_days = serializers.IntegerField(required=False, help_text="Days (1 to 365) a posting stays open.")
    requirements = serializers.DictField(required=False, help_text=requirements_help())
    pay_unmatched_submissions = serializers.BooleanField(
        required=False, help_text="Pay a submission the provider reports that matches no stored response."
    )
    title = serializers.CharField(required=False, allow_blank=True, help_text="The posting's title workers see (at most 200 characters).")
    description = serializers.CharField(required=False, allow_blank=True, help_text="The posting's description workers see.")

    def get_fields(self) -> dict:
        fields = super().get_fields()
        for name, option in providers.all_options().items():
            if not option.requirement:
                fields[name] = option_field(option)
        return fields


class SettleSerializer(RefusesUnknownFields, serializers.Serializer):
    action = serializers.ChoiceField(choices=["approve", "reject", "soft_reject"])
    assignments = serializers.ListField(child=serializers.IntegerField(), min_length=1, max_length=MAX_BULK)
    message = serializers.CharField(
        required=False, allow_blank=True, default="",
        help_text="Shown to the worker. Required to reject, at the length the provider takes (Prolific: at least 100 characters).",
    )


class BonusItemSerializer(RefusesUnknownFields, serializers.Serializer):
    assignment = serializers.IntegerField()
    amount = serializers.DecimalField(max_digits=8, decimal_places=2, min_value=Decimal("0.01"))
    reason = serializers.CharField(max_length=1000)


class BonusSerializer(RefusesUnknownFields, serializers.Serializer):
    bonuses = BonusItemSerializer(many=True, allow_empty=False, max_length=MAX_BULK)


class _JobView(RefusesUnknownQueryParameters, APIView):
    permission_classes = [IsOrganizer]

    def job(self, pk) -> Job:
        job = get_object_or_404(Job, pk=pk)
        self.check_object_permissions(self.request, job)
        return job


class CrowdJobView(_JobView):
    @extend_schema(
        responses={
            200: OpenApiResponse(
                _BODY,
                description="The job's crowd settings, estimate and spend. `provider_options` holds the settings its "
                "provider declares (e.g. MTurk's `sandbox`, Prolific's `prolific_fee_rate`), also given under their own "
                "names; another provider's settings are not shown. `postings` counts them by state (intended: the call "
                "to the provider is pending), `failed_postings` gives the provider's reason for each it refused, `unposted` "
                "the slots a later round added that the budget cannot post (their cost, what is left, what to do), or null. "
                "`estimate` is the cost of every slot the job has (items and raters added to it included), what is posted "
                "priced as its postings reserved it; `committed` is what is reserved against the budget, `spent` what was paid. "
                "`returned_after_submission` counts the assignments submitted in Quorum that their workers then took back at "
                "the provider (never settled; their responses stay as they are), with what that means, or null. `votes` is what "
                "the votes on the job's responses will cost, which `estimate` leaves out (the vote job has its own pay, crowd "
                "settings and budget), or null when the job does not vote.",
            ),
            **NO_JOB,
        },
        summary="Crowd settings, estimate and spend of a job",
    )
    def get(self, request, pk):
        return Response(crowd_overview(self.job(pk)))

    @extend_schema(request=CrowdConfigSerializer, responses={200: _BODY, **REFUSED, **NO_JOB}, summary="Set the provider, budget and requirements")
    def put(self, request, pk):
        job = self.job(pk)
        data = CrowdConfigSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            configure_crowd(job, **data.validated_data)
        except CrowdConfigError as exc:
            return Response({"detail": str(exc), "errors": exc.errors}, status=status.HTTP_400_BAD_REQUEST)
        return Response(crowd_overview(job))


# A launch and a reconciliation keep no run row of their own: what they change is the job's crowd
# overview (postings intended -> created or failed with the provider's reason, assignments and
# payments brought up to date), so that is the resource a 202 names in Location.
FOLLOW_OVERVIEW = location_header(
    "The job's crowd overview: its postings, assignments and payments as the work changes them; `failed_postings` says why a provider refused one."
)


def _overview_url(job) -> str:
    return reverse("crowd-api:job", kwargs={"pk": job.pk})


class LaunchView(_JobView):
    @extend_schema(
        request=None, parameters=[FOLLOW_OVERVIEW], responses={202: _BODY, **NO_JOB, **CONFLICT},
        summary="Launch on the crowd within budget (409 over budget); the postings are made in the background",
    )
    def post(self, request, pk):
        job = self.job(pk)
        try:
            launch_crowd_job(job)
        except BudgetExceeded as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        except JobError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return accepted(request, crowd_overview(job), _overview_url(job))


class AssignmentsView(_JobView):
    @extend_schema(responses={200: _BODY, **NO_JOB}, summary="Postings, assignments and payments of a job")
    def get(self, request, pk):
        job = self.job(pk)
        rows = (
            ProviderAssignment.objects.filter(posting__job=job)
            .select_related("worker", "response")
            .order_by("pk")
            .values("id", "external_id", "state", "provider_status", "missing_response", "worker__external_id",
                    "response_id", "response__status", "submitted_at", "settled_at")[:5000]
        )
        return Response({"results": list(rows)})


class SettleView(_JobView):
    @extend_schema(
        request=SettleSerializer, responses={200: _BODY, **REFUSED, **NO_JOB},
        summary="Approve, reject or soft-reject in bulk; a result per element",
        description="A rejection needs a message the provider takes (Prolific: at least 100 characters, shown to the "
        "participant); without one the request is a 400 naming `message`, and nothing is recorded.",
    )
    def post(self, request, pk):
        job = self.job(pk)
        data = SettleSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        ids = _ids_of_job(job, data.validated_data["assignments"])
        action, message = data.validated_data["action"], data.validated_data["message"]
        refusal = rejection_refusal(ids, message) if action == "reject" else None
        if refusal:  # the same for every element: refused as a request, before anything is recorded
            return Response({"detail": f"Not rejected: {refusal}.", "errors": {"message": refusal}}, status=status.HTTP_400_BAD_REQUEST)
        if action == "approve":
            results = approve_assignments(ids, message)
        elif action == "reject":
            results = reject_assignments(ids, message)
        else:
            results = soft_reject_assignments(ids, message)
        return _results(results, data.validated_data["assignments"], ids)


class BonusView(_JobView):
    @extend_schema(request=BonusSerializer, responses={200: _BODY, **REFUSED, **NO_JOB}, summary="Pay bonuses in bulk; a result per element")
    def post(self, request, pk):
        job = self.job(pk)
        data = BonusSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        items = data.validated_data["bonuses"]
        ids = _ids_of_job(job, [b["assignment"] for b in items])
        results = bonus_assignments([(b["assignment"], b["amount"], b["reason"]) for b in items if b["assignment"] in ids])
        return _results(results, [b["assignment"] for b in items], ids)


class ReconcileView(_JobView):
    @extend_schema(request=None, parameters=[FOLLOW_OVERVIEW], responses={202: _BODY, **NO_JOB}, summary="Reconcile the job with its provider now")
    def post(self, request, pk):
        job = self.job(pk)
        request_reconciliation(job.pk)
        follow = _overview_url(job)
        return accepted(request, {"detail": "reconciliation enqueued", "url": request.build_absolute_uri(follow)}, follow)


def _ids_of_job(job, requested) -> list[int]:
    mine = set(ProviderAssignment.objects.filter(posting__job=job, pk__in=requested).values_list("pk", flat=True))
    return [i for i in requested if i in mine]


def _results(results, requested, allowed):
    by_id = {r.assignment_id: r.as_dict() for r in results}
    out = [
        by_id.get(i) or {"assignment_id": i, "ok": False, "state": "", "error": "no such assignment in this job"}
        for i in requested
    ]
    failed = sum(1 for r in out if not r["ok"])
    return Response({"results": out, "ok": len(out) - failed, "failed": failed})
