"""Writes for a job's crowd settings: choose the provider, set the budget, the requirements and the
provider's options. The one place they are checked: forms and the API only parse types, and the
errors come back by field (`CrowdConfigError.errors`)."""
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from django.core.cache import cache
from django.db import transaction

from annotation.models import Job
from quorum import background

from .. import providers
from ..models import JobCrowdConfig
from ..policy import requirements
from ..providers.options import Kind, Option, OptionsError
from ..selectors.routing import provider_cache_key

MAX_BUDGET = Decimal("9999999999.99")  # the column's 12 digits
TITLE_LENGTH = 200


def _title_length(value: str) -> str | None:
    return f"at most {TITLE_LENGTH} characters" if len(value) > TITLE_LENGTH else None


#: The settings every provider shares, checked here as providers check their own options.
SHARED = (
    Option("minutes_per_assignment", Kind.DECIMAL, "", minimum=Decimal("0.1"), maximum=Decimal("9999.99"), places=2),
    Option("auto_approval_days", Kind.WHOLE, "", minimum=1, maximum=30),
    Option("review_hours", Kind.WHOLE, "", minimum=0, maximum=30 * 24),
    Option("assignments_per_posting", Kind.WHOLE, "", minimum=1, maximum=100),
    Option("lifetime_days", Kind.WHOLE, "", minimum=1, maximum=365),
    Option("pay_unmatched_submissions", Kind.SWITCH, ""),
    Option("title", Kind.TEXT, "", check=_title_length),
    Option("description", Kind.TEXT, ""),
)
#: Shared settings a caller may give beside `provider`; every provider's settings may be given too.
EDITABLE = ("budget", "requirements", *(o.name for o in SHARED))


class CrowdConfigError(ValueError):
    """Settings that cannot be used; `errors` maps each field to what to change (a requirement as
    `requirements.<key>`)."""

    def __init__(self, errors: dict):
        self.errors = errors
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))


def configure_crowd(job: Job, *, provider: str | None = None, **fields: Any) -> JobCrowdConfig:
    """Create or change the job's crowd settings. Provider and requirements only change before posting."""
    unknown = sorted(set(fields) - set(EDITABLE) - providers.setting_names())
    if unknown:
        raise CrowdConfigError({"fields": f"unknown settings {', '.join(unknown)}"})
    with transaction.atomic():
        config, _ = JobCrowdConfig.objects.select_for_update().get_or_create(job=job)
        errors: dict[str, str] = {}
        budget_before = config.budget
        _set_provider(config, provider, posted=job.postings.exists(), errors=errors)
        _set_budget(config, fields, errors)
        _set_shared(config, fields, errors)
        _check_time_within_claim(job, config, fields, errors)
        renewed = _set_requirements(config, fields, errors)
        renewed = _set_provider_options(config, fields, errors) or renewed
        if renewed:
            config.provider_state = {}  # a new listing type (MTurk's HIT type) for new requirements or options
        if errors:
            raise CrowdConfigError(errors)
        config.save()
        # Claims read the job's provider from the cache (hits.receivers.on_slot_claimed): forget it.
        transaction.on_commit(lambda: cache.delete(provider_cache_key(job.pk)))
        if _raised(budget_before, config.budget) and job.state == Job.State.LIVE and not config.rehearsal:
            # Slots a later round added beyond the old budget were left unposted (`post_job`); the
            # builder raised it to post them, so post now what it carries (nothing when none wait).
            background.after_commit("hits.tasks.post_job", job.pk)
    return config


def _raised(before: Decimal | None, after: Decimal | None) -> bool:
    """Whether the budget now carries more: a higher one, or none at all (no cap) where there was one."""
    return before is not None and (after is None or after > before)


def _set_provider(config: JobCrowdConfig, provider: str | None, *, posted: bool, errors: dict) -> None:
    if provider is None or provider == config.provider:
        return
    if provider not in providers.keys():
        errors["provider"] = f"choose one of {', '.join(providers.keys())}"
    elif posted:
        errors["provider"] = "the job already has postings; the provider cannot change"
    else:
        config.provider = provider


def _set_budget(config: JobCrowdConfig, fields: Mapping[str, Any], errors: dict) -> None:
    if "budget" in fields:
        wrong = _budget_problem(fields["budget"], config.committed)
        if wrong is None:
            config.budget = None if fields["budget"] in (None, "") else Decimal(str(fields["budget"]))
        else:
            errors["budget"] = wrong
    if "budget" in fields and config.budget is None and "budget" not in errors and providers.get(config.provider).paid:
        errors["budget"] = "a crowd job needs a budget"


def _budget_problem(value: Any, committed: Decimal) -> str | None:
    if value in (None, ""):
        return None
    try:
        budget = Decimal(str(value))
    except (InvalidOperation, ValueError):
        return "a number"
    if not budget.is_finite() or not Decimal("0") <= budget <= MAX_BUDGET:
        return f"a number from 0 to {MAX_BUDGET}"
    if budget < committed:
        return f"at least the {committed} USD already committed"
    return None


def _set_shared(config: JobCrowdConfig, fields: Mapping[str, Any], errors: dict) -> None:
    for option in SHARED:
        if option.name not in fields:
            continue
        value = fields[option.name]
        if option.kind is Kind.TEXT:
            value = str(value or "").strip()
        wrong = option.problem(value)
        if wrong is None:
            setattr(config, option.name, option.typed(value))
        else:
            errors[option.name] = wrong


def _check_time_within_claim(job: Job, config: JobCrowdConfig, fields: Mapping[str, Any], errors: dict) -> None:
    """The listing's time (a Prolific study's, MTurk's estimate) must fit in the job's claim timeout: a
    claim lapses then, so a worker who takes the time the listing promised loses the item."""
    if "minutes_per_assignment" not in fields or "minutes_per_assignment" in errors:
        return
    refusal = time_beyond_claim(job, config)
    if refusal:
        errors["minutes_per_assignment"] = refusal


def time_beyond_claim(job: Job, config: JobCrowdConfig) -> str | None:
    """Why the listing's time does not fit in the job's claim timeout, or None. Asked when the crowd
    settings are saved and again at launch, since the claim timeout can be lowered in between."""
    timeout = job.claim_timeout_minutes
    if config.minutes_per_assignment is None or config.minutes_per_assignment <= timeout:
        return None
    return (
        f"at most the job's claim timeout of {timeout} minute{'s' if timeout != 1 else ''}: a worker's claim on an "
        f"item lapses then, before the {config.minutes_per_assignment.normalize():f} minutes the listing gives them. "
        "Lower the minutes per assignment, or raise the job's claim timeout in its details first"
    )


def _set_requirements(config: JobCrowdConfig, fields: Mapping[str, Any], errors: dict) -> bool:
    """Whether the requirements were given (and so the listing type must be made again)."""
    if "requirements" not in fields:
        if not config.requirements:
            config.requirements = providers.clean_requirements(config.provider, {})  # the provider's defaults
        return False
    try:
        config.requirements = providers.clean_requirements(config.provider, fields["requirements"])
    except requirements.RequirementsError as exc:
        errors.update({f"requirements.{k}": v for k, v in exc.errors.items()})
    return True


def _set_provider_options(config: JobCrowdConfig, fields: Mapping[str, Any], errors: dict) -> bool:
    """Every provider's settings, defaults filled in; whether a given value changed what was stored."""
    given = {name: fields[name] for name in providers.setting_names() if name in fields}
    before = dict(config.provider_options or {})
    try:
        config.provider_options = providers.clean_settings(given, before)
    except OptionsError as exc:
        errors.update(exc.errors)
        return False
    return any(before.get(name) != config.provider_options.get(name) for name in given)


def crowd_config(job: Job) -> JobCrowdConfig:
    """The job's crowd settings, in-house defaults when none were set."""
    config = JobCrowdConfig.objects.filter(job=job).first()
    return config or configure_crowd(job)
