"""Prolific through its HTTP API (QUORUM_PROLIFIC_API_URL, token from the PROLIFIC_TOKEN variable).

A posting is a study whose external URL carries PROLIFIC_PID, STUDY_ID and SESSION_ID; the
worker finishes with the job's completion code. Study creation has no idempotency token, so the
study's internal_name is the posting's request token and a repeat looks it up before creating.
Submission transitions are idempotent at Prolific. Bonuses are two calls: setting up a bulk bonus
(harmless to repeat: an unpaid draft) and paying it, which is NOT idempotent: the service records
the payment as sent before that call and never makes it twice.
"""
import logging
import math
import os
from collections.abc import Mapping
from decimal import Decimal

import requests
from django.conf import settings

from .. import links, requirements
from .base import Completion, CrowdProvider, Entry, EntryError, ProviderError, RemoteAssignment, TransientProviderError

log = logging.getLogger(__name__)

DEFAULT_API_URL = "https://api.prolific.com"
COMPLETE_URL = "https://app.prolific.com/submissions/complete?cc={code}"
STATUS = {
    "RESERVED": "accepted",
    "ACTIVE": "accepted",
    "AWAITING REVIEW": "submitted",
    "APPROVED": "approved",
    "PARTIALLY APPROVED": "approved",
    "REJECTED": "rejected",
    "RETURNED": "returned",
    "TIMED-OUT": "returned",
    "SCREENED OUT": "returned",
}
MIN_REJECTION_MESSAGE = 100
URL_PARAMS = "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"


class ProlificProvider(CrowdProvider):
    key = "prolific"
    frame_origins = ("https://app.prolific.com",)
    bonus_is_idempotent = False

    def __init__(self, api_url=None, token=None, session=None, timeout=30):
        self.api_url = (api_url or getattr(settings, "QUORUM_PROLIFIC_API_URL", DEFAULT_API_URL)).rstrip("/")
        self._token = token
        self._session = session or requests.Session()
        self.timeout = timeout

    def _headers(self) -> dict:
        token = self._token or os.environ.get(getattr(settings, "QUORUM_PROLIFIC_TOKEN_ENV", "PROLIFIC_TOKEN"), "")
        if not token:
            raise ProviderError("set the PROLIFIC_TOKEN environment variable to use Prolific")
        return {"Authorization": f"Token {token}"}

    def _request(self, method: str, path: str, **kwargs):
        try:
            response = self._session.request(
                method, self.api_url + path, headers=self._headers(), timeout=self.timeout, **kwargs
            )
        except requests.RequestException as exc:
            raise TransientProviderError(f"Prolific {method} {path}: {type(exc).__name__}") from None
        if response.status_code == 429 or response.status_code >= 500:
            raise TransientProviderError(f"Prolific {method} {path}: HTTP {response.status_code}")
        if response.status_code >= 400:
            # The body explains the refusal; it never contains our token.
            raise ProviderError(f"Prolific {method} {path}: HTTP {response.status_code} {response.text[:300]}")
        return response.json() if response.content else {}

    # Postings -------------------------------------------------------------------------------
    def create_posting(self, posting, config) -> str:
        study_id = self.find_posting(posting) if posting.attempts > 1 else None
        if not study_id:
            job = config.job
            req = requirements.clean(config.requirements, "prolific")
            blocked = [b.worker.external_id for b in job.worker_blocks.select_related("worker") if b.worker.provider == "prolific"]
            body = {
                "name": (config.title or job.name)[:120],
                "internal_name": posting.request_token,
                "description": config.description or job.instructions or job.name,
                "external_study_url": f"{links.entry_url('prolific', job.id)}?{URL_PARAMS}",
                "prolific_id_option": "url_parameters",
                "completion_codes": [
                    {
                        "code": links.completion_code(job.id),
                        "code_type": "COMPLETED",
                        "actions": [{"action": "MANUALLY_REVIEW"}],
                    }
                ],
                "total_available_places": int(posting.assignments),
                "estimated_completion_time": max(1, math.ceil(config.minutes_per_assignment)),
                "reward": int((posting.reward * 100).to_integral_value()),
                "device_compatibility": ["desktop"],
                "filters": requirements.prolific_filters(req, blocked_ids=blocked),
            }
            study_id = self._request("POST", "/api/v1/studies/", json=body)["id"]
        study = self._request("GET", f"/api/v1/studies/{study_id}/")
        if study.get("status") == "UNPUBLISHED":
            self._request("POST", f"/api/v1/studies/{study_id}/transition/", json={"action": "PUBLISH"})
        return study_id

    def find_posting(self, posting) -> str | None:
        page = self._request("GET", "/api/v1/studies/")
        for study in page.get("results", []):
            if study.get("internal_name") == posting.request_token:
                return study["id"]
        return None

    def close_posting(self, posting) -> None:
        self._request("POST", f"/api/v1/studies/{posting.external_id}/transition/", json={"action": "STOP"})

    # Assignments ----------------------------------------------------------------------------
    def list_assignments(self, posting) -> list[RemoteAssignment]:
        out, page_number = [], 1
        while True:
            page = self._request(
                "GET", "/api/v1/submissions/", params={"study": posting.external_id, "page": page_number, "page_size": 200}
            )
            for s in page.get("results", []):
                status = s.get("status", "")
                out.append(
                    RemoteAssignment(
                        external_id=s["id"],
                        worker_external_id=s.get("participant_id") or s.get("participant") or "",
                        status=STATUS.get(status, "accepted"),
                        provider_status=status,
                        posting_external_id=s.get("study_id", posting.external_id),
                    )
                )
            next_link = (page.get("_links") or {}).get("next") or {}
            if not page.get("results") or not next_link.get("href"):
                return out
            page_number += 1

    def parse_entry(self, params: Mapping) -> Entry:
        pid, study, session = (params.get(k, "") for k in ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID"))
        if not (pid or study or session):
            return Entry(preview=True)
        for name, value in (("PROLIFIC_PID", pid), ("STUDY_ID", study), ("SESSION_ID", session)):
            if not value or not value.isalnum() or len(value) > 64:
                raise EntryError(f"The link from Prolific has no usable {name}; open the study from Prolific again.")
        return Entry(False, study, session, pid, "")

    def completion(self, assignment, config) -> Completion:
        # QUORUM_PROLIFIC_COMPLETE_URL exists for `manage.py rehearse`, which points it at the local fake.
        template = getattr(settings, "QUORUM_PROLIFIC_COMPLETE_URL", "") or COMPLETE_URL
        return Completion(url=template.format(code=links.completion_code(config.job_id)))

    # Money ----------------------------------------------------------------------------------
    def _transition(self, payment, body) -> str:
        self._request("POST", f"/api/v1/submissions/{payment.assignment.external_id}/transition/", json=body)
        return body["action"]

    def approve(self, payment) -> str:
        return self._transition(payment, {"action": "APPROVE"})

    def reject(self, payment) -> str:
        if len(payment.message.strip()) < MIN_REJECTION_MESSAGE:
            raise ProviderError(f"Prolific needs a rejection message of at least {MIN_REJECTION_MESSAGE} characters")
        return self._transition(
            payment, {"action": "REJECT", "message": payment.message, "rejection_category": "LOW_EFFORT"}
        )

    def prepare_bonus(self, payment) -> str:
        assignment = payment.assignment
        body = {
            "study_id": assignment.posting.external_id,
            "csv_bonuses": f"{assignment.worker.external_id},{payment.amount:.2f}",
        }
        return self._request("POST", "/api/v1/submissions/bonus-payments/", json=body)["id"]

    def bonus(self, payment) -> str:
        if not payment.provider_reference:
            raise ProviderError("the bonus has no prepared bulk payment")
        self._request("POST", f"/api/v1/bulk-bonus-payments/{payment.provider_reference}/pay/")
        return payment.provider_reference

    def bonus_was_paid(self, payment) -> bool | None:
        """True when the submission shows more bonuses of this amount than Quorum has confirmed."""
        submission = self._request("GET", f"/api/v1/submissions/{payment.assignment.external_id}/")
        amount = int((Decimal(payment.amount) * 100).to_integral_value())
        shown = sum(1 for b in submission.get("bonus_payments") or [] if int(b) == amount)
        confirmed = payment.assignment.payments.filter(
            kind="bonus", state="confirmed", amount=payment.amount
        ).exclude(pk=payment.pk).count()
        return True if shown > confirmed else None
