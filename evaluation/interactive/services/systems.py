"""Writes for interactive evaluation's set-up: registering dialog systems (the contract check runs
on registration and its result is stored) and importing user goals with their entity database."""
import secrets as _secrets

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.models import Item
from evaluation.errors import EvaluationInputError
from evaluation.interactive import goals as goal_rules
from evaluation.interactive.systems.check import passed, run_check
from evaluation.models import Challenge, DialogSystem, GoalSet, UserGoal

MIN_SECRET_CHARS = 16


def _clean_system(name: str, url: str, secret: str) -> tuple[str, str, str]:
    name, url, secret = (name or "").strip(), (url or "").strip().rstrip("/"), secret or ""
    if not name:
        raise EvaluationInputError("a system needs a name")
    try:
        URLValidator(schemes=["http", "https"])(url)
    except ValidationError:
        raise EvaluationInputError(f"{url!r} is not an http(s) URL") from None
    if len(secret) < MIN_SECRET_CHARS:
        raise EvaluationInputError(f"the secret must be at least {MIN_SECRET_CHARS} characters (it signs every request)")
    return name, url, secret


def _store_check(system: DialogSystem) -> DialogSystem:
    """Run the contract check (outside any transaction: it waits on the network) and store it."""
    results = run_check(system.url, system.secret, timeout=settings.QUORUM_SYSTEM_TURN_TIMEOUT_SECONDS)
    DialogSystem.objects.filter(pk=system.pk).update(
        check_passed=passed(results), check_results=[r.as_dict() for r in results], checked_at=timezone.now()
    )
    system.refresh_from_db()
    return system


def register_system(*, name: str, url: str, secret: str, challenge: str = "") -> DialogSystem:
    """Register a system and run the contract check against it. A system that fails the check is
    still registered (the organizer sees why and can check again once it is fixed)."""
    name, url, secret = _clean_system(name, url, secret)
    try:
        with transaction.atomic():
            owner = Challenge.objects.get_or_create(name=challenge.strip())[0] if challenge and challenge.strip() else None
            system = DialogSystem.objects.create(
                challenge=owner, name=name, url=url, secret=secret, public_id=_secrets.token_hex(8)
            )
    except IntegrityError:
        raise EvaluationInputError(f"a system named {name!r} is already registered") from None
    return _store_check(system)


def check_system_again(system: DialogSystem) -> DialogSystem:
    return _store_check(system)


def change_system(system: DialogSystem, *, url: str = "", secret: str = "") -> DialogSystem:
    """A new URL and/or secret for a registered system (blank: keep it), then the contract check
    again. Its name and public id stay, so chats already made with it keep pointing at it."""
    _name, url, secret = _clean_system(system.name, url or system.url, secret or system.secret)
    DialogSystem.objects.filter(pk=system.pk).update(url=url, secret=secret)
    system.refresh_from_db()
    return _store_check(system)


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
