"""Writes for the organizer's team: in-house annotators added from a list, each with a one-time
link to set their password, and deactivated when they leave.

The link is Django's password-reset link (`default_token_generator`): it works once (setting the
password changes the hash the token is made from), expires after PASSWORD_RESET_TIMEOUT, and no
password ever travels in a file or an email written by Quorum.
"""
import csv
import io
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from quorum.roles import is_organizer, make_annotator

from ..models import Worker

MAX_ROWS = 1000  # a team, not a crowd: crowd workers come through their provider


class TeamError(ValueError):
    """A team change that cannot be made; the message says what to change."""


@dataclass(frozen=True)
class AddedAnnotator:
    line: int
    username: str
    ok: bool
    message: str  # "added", or why the row was not
    link: str = ""  # the path of the one-time set-password link (the caller adds the host)


def set_password_path(user) -> str:
    """The path of a one-time link that lets `user` choose a password."""
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    return reverse("password_reset_confirm", kwargs={"uidb64": uid, "token": default_token_generator.make_token(user)})


def parse_team_csv(text: str) -> list[tuple[int, list[str]]]:
    """(line number, cells) of a CSV of username,email[,name]; a header row naming the columns is skipped."""
    rows = []
    for number, cells in enumerate(csv.reader(io.StringIO(text)), start=1):
        cells = [c.strip() for c in cells]
        if not any(cells):
            continue
        if number == 1 and cells and cells[0].lower() == "username":
            continue
        rows.append((number, cells))
    if not rows:
        raise TeamError("the list is empty: write one annotator a line, username,email and optionally ,name, or choose a CSV file")
    if len(rows) > MAX_ROWS:
        raise TeamError(f"at most {MAX_ROWS} annotators at once; this list has {len(rows)}")
    return rows


def add_annotators(rows) -> list[AddedAnnotator]:
    """Create an in-house annotator (an account without a usable password, and its Worker) per row
    of (line, [username, email, name?]); a result per row, and a bad row never stops the others.
    An existing user name is reported, not changed."""
    User = get_user_model()
    results = []
    for line, cells in rows:
        username, email, name = (cells + ["", "", ""])[:3]
        problem = ""
        if len(cells) > 3:  # e.g. a name with an unquoted comma: its rest would be dropped unsaid
            problem = f"{len(cells)} cells; the columns are username, email, name (quote a name that has a comma)"
        elif not username or len(username) > 150:
            problem = "a user name of 1 to 150 characters is needed"
        elif not _valid_username(User, username):
            problem = f"{username!r} is not a user name: use letters, digits and @ . + - _ only"
        elif not email:
            problem = "no email: a line is username,email and optionally ,name"
        else:
            try:
                validate_email(email)
            except ValidationError:
                problem = f"{email!r} is not an email address"
        if not problem and User.objects.filter(username=username).exists():
            problem = "this user name exists already; nothing was changed"
        if problem:
            results.append(AddedAnnotator(line, username, False, problem))
            continue
        first, _, last = name.partition(" ")
        with transaction.atomic():
            user = User(username=username, email=email, first_name=first[:150], last_name=last[:150])
            user.set_unusable_password()  # they choose it through the one-time link
            user.save()
            make_annotator(user)
        results.append(AddedAnnotator(line, username, True, "added", set_password_path(user)))
    return results


def _valid_username(User, username: str) -> bool:
    try:
        User.username_validator(username)
    except ValidationError:
        return False
    return True


def lines_to_correct(rows, results: list[AddedAnnotator]) -> str:
    """The rows that were not added, as CSV lines, for the builder to correct and add again."""
    refused = {result.line for result in results if not result.ok}
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for line, cells in rows:
        if line in refused:
            writer.writerow(cells)
    return out.getvalue()


def set_active(worker: Worker, active: bool) -> Worker:
    """Deactivate (or reactivate) an in-house annotator: an inactive account cannot log in, and its
    open work pages refuse it (the work page checks `is_active`); its responses are kept."""
    user = worker.user if worker.user_id is not None else None
    if user is None:
        raise TeamError("only in-house annotators have accounts; crowd workers are blocked through their provider")
    if not active and (user.is_superuser or is_organizer(user)):
        # An organizer may also annotate; their account is not the team's to switch off (issue 25).
        raise TeamError(f"{user.get_username()} is an organizer or administrator; only an administrator can deactivate them (in the admin)")
    type(user).objects.filter(pk=user.pk).update(is_active=active)
    user.refresh_from_db(fields=["is_active"])
    return worker
