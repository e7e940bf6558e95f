"""Writes for interactive evaluation's set-up: registering dialog systems (the contract check is
queued on registration and runs in the background, its results stored rule by rule as they come,
so the systems page shows its progress) and importing user goals with their entity database."""
import secrets as _secrets
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.models import Item
from evaluation.errors import EvaluationInputError
from evaluation.interactive import goals as goal_rules
from evaluation.interactive.services.screening import reply_screen
from evaluation.interactive.systems.addresses import AddressPolicy, AddressRefused, resolve_within, url_problem
from evaluation.interactive.systems.check import passed, run_check
from evaluation.interactive.systems.client import SystemClient
from evaluation.interactive.systems.signing import MIN_SECRET_CHARS
from evaluation.models import Challenge, DialogSystem, GoalSet, UserGoal
from quorum.background import after_commit


def address_policy() -> AddressPolicy:
    """The operator's policy (QUORUM_SYSTEM_ALLOWED_HOSTS) over where systems may be called."""
    return AddressPolicy.from_setting(settings.QUORUM_SYSTEM_ALLOWED_HOSTS)


def client_for(url: str, secret: str, timeout: float | None = None) -> SystemClient:
    """The one way Quorum calls a system (its pages, tasks and `check_system`): the settings'
    deadline (or `timeout`), reply cap and address policy."""
    return SystemClient(
        url, secret, timeout=settings.QUORUM_SYSTEM_TURN_TIMEOUT_SECONDS if timeout is None else timeout,
        max_bytes=settings.QUORUM_SYSTEM_MAX_REPLY_BYTES, resolve=address_policy().resolve,
    )


def _check_target(url: str) -> None:
    """Refuse a URL with credentials or that resolves to an address the policy refuses."""
    problem = url_problem(url)
    if problem:
        raise EvaluationInputError(problem)
    parts = urlsplit(url)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        resolve_within(address_policy().resolve, parts.hostname or "", port, settings.QUORUM_SYSTEM_TURN_TIMEOUT_SECONDS)
    except AddressRefused as exc:
        raise EvaluationInputError(str(exc)) from None


def _clean_system(name: str, url: str, secret: str) -> tuple[str, str, str]:
    name, url, secret = (name or "").strip(), (url or "").strip().rstrip("/"), secret or ""
    if not name:
        raise EvaluationInputError("a system needs a name")
    try:
        URLValidator(schemes=["http", "https"])(url)
    except ValidationError:
        raise EvaluationInputError(f"{url!r} is not an http(s) URL") from None
    _check_target(url)
    if len(secret) < MIN_SECRET_CHARS:
        raise EvaluationInputError(f"the secret must be at least {MIN_SECRET_CHARS} characters (it signs every request)")
    return name, url, secret


def request_check(system: DialogSystem) -> DialogSystem:
    """Queue the contract check (task `evaluation.tasks.check_dialog_system`). Until it ends the
    system shows as being checked: no `checked_at`, and the rules done so far in `check_results`."""
    with transaction.atomic():
        DialogSystem.objects.filter(pk=system.pk).update(check_passed=False, check_results=[], checked_at=None)
        after_commit("evaluation.tasks.check_dialog_system", system.pk)
    system.refresh_from_db()
    return system


def run_system_check(system_id: int) -> DialogSystem | None:
    """Run the contract check (outside any transaction: it waits on the network), storing each
    rule's result as it comes and the verdict at the end. None if the system is gone. Its replies
    go through the offensive-word filter of counted chats: hits are a warning on the results, not
    a failure (a resume waits on the verdict only)."""
    system = DialogSystem.objects.filter(pk=system_id).first()
    if system is None:
        return None

    def progress(results):
        DialogSystem.objects.filter(pk=system_id).update(check_results=[r.as_dict() for r in results])

    results = run_check(system.url, system.secret, client=client_for(system.url, system.secret), on_result=progress, screen=reply_screen())
    DialogSystem.objects.filter(pk=system_id).update(
        check_passed=passed(results), check_results=[r.as_dict() for r in results], checked_at=timezone.now()
    )
    _resume_if_asked(system_id, results)
    system.refresh_from_db()
    return system


def _resume_if_asked(system_id: int, results) -> None:
    """The end of a check Resume queued (`chats.resume_system`): resumed if it passed (only turns
    from now count towards pausing it again); else still paused, the failed rules its reason."""
    asked = DialogSystem.objects.filter(pk=system_id, resume_when_checked=True, paused_at__isnull=False)
    if passed(results):
        asked.update(paused_at=None, paused_reason="", resumed_at=timezone.now(), resume_when_checked=False)
        return
    failed = "; ".join(f"{r.rule}: {r.reason}" for r in results if not r.passed)
    asked.update(paused_reason=f"not resumed, its contract check failed ({failed})"[:300], resume_when_checked=False)


def register_system(*, name: str, url: str, secret: str, challenge: str = "") -> DialogSystem:
    """Register a system and queue the contract check against it (`request_check`). A system that
    fails the check is still registered (the organizer sees why and can check again once it is
    fixed)."""
    name, url, secret = _clean_system(name, url, secret)
    try:
        with transaction.atomic():
            owner = Challenge.objects.get_or_create(name=challenge.strip())[0] if challenge and challenge.strip() else None
            system = DialogSystem.objects.create(
                challenge=owner, name=name, url=url, secret=secret, public_id=_secrets.token_hex(8)
            )
    except IntegrityError:
        raise EvaluationInputError(f"a system named {name!r} is already registered") from None
    return request_check(system)


def check_system_again(system: DialogSystem) -> DialogSystem:
    return request_check(system)


def change_system(system: DialogSystem, *, url: str = "", secret: str = "") -> DialogSystem:
    """A new URL and/or secret for a registered system (blank: keep it), then the contract check
    again. Its name and public id stay, so chats already made with it keep pointing at it."""
    _name, url, secret = _clean_system(system.name, url or system.url, secret or system.secret)
    DialogSystem.objects.filter(pk=system.pk).update(url=url, secret=secret)
    system.refresh_from_db()
    return request_check(system)


def system_uses(system: DialogSystem) -> list[str]:
    """What depends on a system (chats held with it, chat items that name it, entries that link it);
    empty: it may be deleted."""
    uses = []
    sessions = system.sessions.count()
    if sessions:
        uses.append(f"{sessions} conversation{'s' if sessions != 1 else ''}")
    items = Item.objects.filter(payload__endpoint=system.public_id).count()
    if items:
        uses.append(f"{items} chat item{'s' if items != 1 else ''}")
    entries = system.entries.count()
    if entries:
        uses.append(f"{entries} entr{'ies' if entries != 1 else 'y'}")
    return uses


def delete_system(system: DialogSystem) -> None:
    """Delete a system nothing depends on (its name is free again); otherwise refuse, saying what
    uses it and what to do instead."""
    uses = system_uses(system)
    if uses:
        raise EvaluationInputError(
            f"{system.name!r} is in use ({', '.join(uses)}), so its record stays; change its URL or secret, "
            "or let it be paused, instead"
        )
    system.delete()


def import_goals(*, name: str, goals_file: bytes, databases: dict[str, bytes] | None = None) -> GoalSet:
    """A goal set from a MultiWOZ data.json's `goal` fields or a JSONL of goals, with one
    MultiWOZ-style db JSON per domain ({domain: bytes}). All or nothing."""
    name = (name or "").strip()
    if not name:
        raise EvaluationInputError("a goal set needs a name")
    try:
        parsed = goal_rules.parse_goals(goals_file)
        database = {domain: goal_rules.parse_database(domain, raw) for domain, raw in (databases or {}).items()}
    except goal_rules.GoalError as exc:
        raise EvaluationInputError(str(exc)) from None
    try:
        with transaction.atomic():
            goal_set = GoalSet.objects.create(name=name, database=database)
            UserGoal.objects.bulk_create(UserGoal(goal_set=goal_set, key=key, goal=goal) for key, goal in parsed)
    except IntegrityError:
        raise EvaluationInputError(f"a goal set named {name!r} exists already") from None
    return goal_set
