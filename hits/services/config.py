"""Writes for a job's crowd settings: choose the provider, set the budget and the requirements."""
from decimal import Decimal, InvalidOperation

from django.core.cache import cache
from django.db import transaction

from annotation.models import Job

from .. import providers, requirements
from ..models import JobCrowdConfig, Provider
from ..selectors.routing import provider_cache_key

EDITABLE = (
    "budget", "minutes_per_assignment", "auto_approval_days", "assignments_per_posting", "lifetime_days",
    "requirements", "prolific_fee_rate", "sandbox", "pay_unmatched_submissions", "title", "description",
)


class CrowdConfigError(ValueError):
    """Settings that cannot be used; `errors` maps each field to what to change."""

    def __init__(self, errors: dict):
        self.errors = errors
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))


def _decimal(value, field, errors, *, minimum=Decimal("0")):
    try:
        number = Decimal(str(value))
    except (InvalidOperation, ValueError):
        errors[field] = "a number"
        return None
    if not number.is_finite() or number < minimum:
        errors[field] = f"a number of at least {minimum}"
        return None
    return number


def configure_crowd(job: Job, *, provider: str | None = None, **fields) -> JobCrowdConfig:
    """Create or change the job's crowd settings. Provider and requirements only change before posting."""
    unknown = sorted(set(fields) - set(EDITABLE))
    if unknown:
        raise CrowdConfigError({"fields": f"unknown settings {', '.join(unknown)}"})
    with transaction.atomic():
        config, _ = JobCrowdConfig.objects.select_for_update().get_or_create(job=job)
        errors = {}
        posted = job.postings.exists()
        if provider is not None and provider != config.provider:
            if provider not in Provider.values:
                errors["provider"] = f"choose one of {', '.join(Provider.values)}"
            elif posted:
                errors["provider"] = "the job already has postings; the provider cannot change"
            else:
                config.provider = provider
        if "budget" in fields:
            if fields["budget"] in (None, ""):
                config.budget = None
            else:
                budget = _decimal(fields["budget"], "budget", errors)
                if budget is not None and budget < config.committed:
                    errors["budget"] = f"at least the {config.committed} USD already committed"
                elif budget is not None:
                    config.budget = budget
        for name, minimum in (("minutes_per_assignment", Decimal("0.1")), ("prolific_fee_rate", Decimal("0"))):
            if name in fields:
                value = _decimal(fields[name], name, errors, minimum=minimum)
                if value is not None:
                    setattr(config, name, value)
        for name in ("auto_approval_days", "assignments_per_posting", "lifetime_days"):
            if name in fields:
                value = fields[name]
                if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 365:
                    errors[name] = "a whole number from 1 to 365"
                else:
                    setattr(config, name, value)
        if "requirements" in fields:
            try:
                config.requirements = providers.clean_requirements(config.provider, fields["requirements"])
            except requirements.RequirementsError as exc:
                errors.update({f"requirements.{k}": v for k, v in exc.errors.items()})
            else:
                config.external_type_id = ""  # a new HIT type for new requirements
        for name in ("sandbox", "pay_unmatched_submissions"):
            if name in fields:
                if not isinstance(fields[name], bool):
                    errors[name] = "true or false"
                else:
                    setattr(config, name, fields[name])
        for name in ("title", "description"):
            if name in fields:
                setattr(config, name, str(fields[name] or "").strip())
        provider_ = providers.get(config.provider)
        if provider_.paid and config.budget is None and "budget" in fields:
            errors["budget"] = "a crowd job needs a budget"
        if errors:
            raise CrowdConfigError(errors)
        if "requirements" not in fields and not config.requirements:
            config.requirements = providers.clean_requirements(config.provider, {})  # the provider's defaults
        config.save()
        # Claims read the job's provider from the cache (hits.receivers.on_slot_claimed): forget it.
        transaction.on_commit(lambda: cache.delete(provider_cache_key(job.pk)))
    return config


def crowd_config(job: Job) -> JobCrowdConfig:
    """The job's crowd settings, in-house defaults when none were set."""
    config = JobCrowdConfig.objects.filter(job=job).first()
    return config or configure_crowd(job)
