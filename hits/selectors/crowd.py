"""Reads for the organizer: estimated cost before launch, and postings, assignments and payments of a job."""
from decimal import Decimal

from django.db.models import Count, Sum

from annotation.models import Item, Job

from .. import costs
from ..models import JobCrowdConfig, Payment, Posting, ProviderAssignment


def estimate_for_job(job: Job, config: JobCrowdConfig | None = None) -> costs.Estimate:
    """Cost of the whole job (items x redundancy) on its provider, fees included, with the hourly pay."""
    config = config or JobCrowdConfig.objects.filter(job=job).first() or JobCrowdConfig(job=job)
    return costs.estimate(
        config.provider,
        items=Item.objects.filter(job=job).count(),
        redundancy=job.redundancy,
        reward=job.reward,
        assignments_per_posting=config.assignments_per_posting,
        prolific_fee_rate=config.prolific_fee_rate,
        minutes_per_assignment=config.minutes_per_assignment,
    )


def _by(queryset, field, extra=None):
    rows = queryset.values(field).annotate(n=Count("id"), **(extra or {}))
    return {r[field]: {k: (str(v) if isinstance(v, Decimal) else v) for k, v in r.items() if k != field} for r in rows}


def crowd_overview(job: Job) -> dict:
    """Everything an organizer watches for a job's crowd: budget, postings, assignments, payments."""
    config = JobCrowdConfig.objects.filter(job=job).first()
    if config is None:
        return {"provider": "inhouse", "configured": False}
    assignments = ProviderAssignment.objects.filter(posting__job=job)
    payments = Payment.objects.filter(assignment__posting__job=job)
    return {
        "configured": True,
        "provider": config.provider,
        "sandbox": config.sandbox,
        "budget": str(config.budget) if config.budget is not None else None,
        "committed": str(config.committed),
        "left": str(config.budget - config.committed) if config.budget is not None else None,
        "estimate": estimate_for_job(job, config).as_dict(),
        "postings": _by(Posting.objects.filter(job=job), "state", {"assignments": Sum("assignments")}),
        "assignments": _by(assignments, "state"),
        "missing_responses": assignments.filter(missing_response=True).count(),
        "payments": {
            kind: _by(payments.filter(kind=kind), "state", {"amount": Sum("amount")}) for kind in Payment.Kind.values
        },
        "payments_needing_attention": payments.filter(needs_attention=True).count(),
    }
