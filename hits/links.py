"""Links a worker follows: provider entry URLs, the task page, the completion code. Reads settings."""
import base64
import hashlib
import hmac

from django.conf import settings
from django.core import signing
from django.urls import reverse

DONE_SALT = "hits.done"


def public_url(path: str) -> str:
    """An absolute URL on Quorum's public address (QUORUM_PUBLIC_BASE_URL)."""
    base = getattr(settings, "QUORUM_PUBLIC_BASE_URL", "http://127.0.0.1:8000").rstrip("/")
    return base + path


def entry_path(provider: str, job_id: int) -> str:
    """/crowd/<provider>/<job id>/: the one entry view, for every provider (MTurk's ExternalQuestion URL and
    Prolific's study URL have always had this shape)."""
    return reverse("hits:entry", args=[provider, job_id])


def entry_url(provider: str, job_id: int) -> str:
    return public_url(entry_path(provider, job_id))


def completion_code(job_id: int) -> str:
    """The Prolific completion code of a job: derived from SECRET_KEY, so it is never stored."""
    digest = hmac.new(settings.SECRET_KEY.encode(), f"quorum-completion-{job_id}".encode(), hashlib.sha256).digest()
    return base64.b32encode(digest).decode()[:10]


def task_url(slot) -> str:
    """The task page for a claimed slot, carrying the signed per-assignment token."""
    from annotation.work_tokens import make_token  # written by the annotation app

    return reverse("work", args=[make_token(slot)])


def done_token(assignment_id: int) -> str:
    return signing.dumps({"pa": assignment_id}, salt=DONE_SALT, compress=True)


def read_done_token(token: str, max_age: int) -> int:
    """The ProviderAssignment id in a done-page token; signing.BadSignature when forged or stale."""
    return int(signing.loads(token, salt=DONE_SALT, max_age=max_age)["pa"])


def done_url(assignment_id: int) -> str:
    return reverse("hits:done", args=[done_token(assignment_id)])
