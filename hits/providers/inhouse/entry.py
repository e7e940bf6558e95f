"""How an in-house annotator arrives: signed in to Quorum, known by their user, not by parameters."""
from ..base import Entry, EntryError


def parse(user) -> Entry:
    if user is None or not user.is_authenticated:
        raise EntryError("Sign in to Quorum to take this task.")
    return Entry(preview=False, worker_external_id=user.get_username(), signed_in=True)
