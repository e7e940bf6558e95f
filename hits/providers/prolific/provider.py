"""Prolific through its HTTP API (client.py): the one class that talks to Prolific.

A posting is a study whose external URL carries PROLIFIC_PID, STUDY_ID and SESSION_ID; the
worker finishes with the job's completion code. Study creation has no idempotency token, so the
study's internal_name is the posting's request token and a repeat looks it up before creating.
Submission transitions are idempotent at Prolific. Bonuses are two calls: setting up a bulk bonus
(harmless to repeat: an unpaid draft) and paying it, which is NOT idempotent: the service records
the payment as sent before that call and never makes it twice. Submission status changes arrive by
signed hooks (hooks.py); the reconciler's listing is the fallback.
"""
import logging
from collections.abc import Mapping
from decimal import Decimal

from django.conf import settings

from ... import links
from ..base import Completion, Confirmation, CrowdProvider, Entry, ProviderError, RemoteAssignment
from .client import ProlificAPI, spending_refusal
from .entry import parse as read_entry
from .fees import decimal_text, minor_units, study_fee
from .fees import fee as prolific_fee
from .options import OPTIONS
from .posting import study_body
from .status import STATUS

log = logging.getLogger(__name__)

COMPLETE_URL = "https://app.prolific.com/submissions/complete?cc={code}"
MIN_REJECTION_MESSAGE = 100


class ProlificProvider(CrowdProvider):
    key = "prolific"
    label = "Prolific"
    frame_origins = ("https://app.prolific.com",)
    bonus_is_idempotent = False
    rehearsable = True
    pushes_status = True
    options = OPTIONS
    # Prolific lets a participant take one place in a study; Quorum keeps it per job, whatever
    # SESSION_ID a participant arrives with, and does not count on Prolific to stop a second one.
    one_place_per_worker = True
    preview_notice = "This is a preview of the study. Take part from Prolific to start; nothing you do here is saved."
    finished_notice = "This study has finished and takes no more participants. Please return it on Prolific."
    one_place_refusal = (
        "You have already taken part in this study with your Prolific ID, and each participant takes one place. "
        "Please return this submission on Prolific so that the place goes to someone else."
    )

    def __init__(self, api_url=None, token=None, session=None, timeout=30):
        self.api = ProlificAPI(api_url=api_url, token=token, session=session, timeout=timeout)
        self.api_url = self.api.api_url

    def _request(self, method: str, path: str, **kwargs):
        return self.api.request(method, path, **kwargs)

    def spending_refusal(self) -> str | None:
        return spending_refusal(self.api_url)

    def _spend(self) -> None:
        """Refuse a spending call without the switch; the services ask `spending_refusal` first, so this
        is the last line, never the usual way."""
        refusal = self.spending_refusal()
        if refusal:
            raise ProviderError(refusal)

    # Fees, requirements, URLs ---------------------------------------------------------------
    def fee_per_assignment(self, reward, *, assignments_per_posting: int = 1, fee_rate=0):
        return prolific_fee(reward, fee_rate)

    def fee_on_places(self, reward, places: int, *, assignments_per_posting: int = 1, fee_rate=0):
        return study_fee(reward, places, fee_rate)

    def bonus_fee(self, amount, *, fee_rate=0):
        return prolific_fee(amount, fee_rate)

    def rejection_refusal(self, message: str) -> str | None:
        length = len((message or "").strip())
        if length >= MIN_REJECTION_MESSAGE:
            return None
        return (
            f"Prolific needs a rejection message of at least {MIN_REJECTION_MESSAGE} characters for the participant; "
            f"this one has {length}"
        )

    def fee_rate(self, config) -> Decimal:
        return self.options_of(config)["prolific_fee_rate"]

    def url_patterns(self) -> list:
        from .hooks import url_patterns

        return url_patterns()

    def subscribe_hooks(self, *, workspace_id: str, target_url: str) -> dict:
        """Have Prolific push submission status changes to `target_url` (see hooks.py)."""
        from .hooks import subscribe

        return subscribe(self.api, workspace_id=workspace_id, target_url=target_url)

    # Postings -------------------------------------------------------------------------------
    def create_posting(self, posting, config) -> str:
        self._spend()  # a study is made to be published: none is made without the switch
        study_id = self.find_posting(posting) if posting.attempts > 1 else None
        if not study_id:
            job = config.job
            req = {**(config.requirements or {})}
            blocked = [b.worker.external_id for b in job.worker_blocks.select_related("worker") if b.worker.provider == self.key]
            body = study_body(
                posting, config, entry_url=links.entry_url(self.key, job.id), completion_code=links.completion_code(job.id),
                req=req, blocked_ids=blocked,
            )
            study_id = self._request("POST", "/api/v1/studies/", json=body)["id"]
        study = self._request("GET", f"/api/v1/studies/{study_id}/")
        if study.get("status") == "UNPUBLISHED":
            self._request("POST", f"/api/v1/studies/{study_id}/transition/", json={"action": "PUBLISH"})
        return study_id

    def find_posting(self, posting) -> str | None:
        # One call: Prolific documents "List all studies" (GET /api/v1/studies/, docs.prolific.com/api-reference/
        # studies/get-studies) with a `state` filter only and `results` as every study matching it, with no
        # page, page_size or next link; paging is documented for a project's studies and for submissions
        # (`list_assignments` follows it), not for this list.
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

    def parse_entry(self, params: Mapping, user=None) -> Entry:
        return read_entry(params)

    def confirm(self, assignment, now) -> Confirmation:
        """Whether Prolific has this submission, in this study, for this participant. A submission exists
        from the moment the participant starts the study, so "not found" is final at once."""
        try:
            submission = self._request("GET", f"/api/v1/submissions/{assignment.external_id}/")
        except ProviderError as exc:
            if "HTTP 404" not in str(exc):
                raise
            return Confirmation(Confirmation.REFUTED, f"Prolific has no submission {assignment.external_id}")
        return Confirmation.of_record(
            assignment, what="Prolific's submission",
            posting_external_id=submission.get("study_id") or submission.get("study") or "",
            worker_external_id=submission.get("participant_id") or submission.get("participant") or "",
            status=submission.get("status", ""),
        )

    def completion(self, assignment, config) -> Completion:
        template = settings.QUORUM_PROLIFIC_COMPLETE_URL or COMPLETE_URL  # the rehearsal's fake sets it
        return Completion(url=template.format(code=links.completion_code(config.job_id)))

    # Money ----------------------------------------------------------------------------------
    def _transition(self, payment, body) -> str:
        self._request("POST", f"/api/v1/submissions/{payment.assignment.external_id}/transition/", json=body)
        return body["action"]

    def approve(self, payment) -> str:
        self._spend()
        return self._transition(payment, {"action": "APPROVE"})

    def reject(self, payment) -> str:
        refusal = self.rejection_refusal(payment.message)  # asked before the rejection is recorded; the last line
        if refusal:
            raise ProviderError(refusal)
        return self._transition(
            payment, {"action": "REJECT", "message": payment.message, "rejection_category": "LOW_EFFORT"}
        )

    def prepare_bonus(self, payment) -> str:
        assignment = payment.assignment
        body = {
            "study_id": assignment.posting.external_id,
            "csv_bonuses": f"{assignment.worker.external_id},{decimal_text(payment.amount)}",
        }
        return self._request("POST", "/api/v1/submissions/bonus-payments/", json=body)["id"]

    def bonus(self, payment) -> str:
        if not payment.provider_reference:
            raise ProviderError("the bonus has no prepared bulk payment")
        self._spend()
        self._request("POST", f"/api/v1/bulk-bonus-payments/{payment.provider_reference}/pay/")
        return payment.provider_reference

    def bonus_was_paid(self, payment) -> bool | None:
        """True when the submission shows more bonuses of this amount than Quorum has confirmed."""
        submission = self._request("GET", f"/api/v1/submissions/{payment.assignment.external_id}/")
        amount = minor_units(payment.amount)
        shown = sum(1 for b in submission.get("bonus_payments") or [] if int(b) == amount)
        confirmed = payment.assignment.payments.filter(
            kind="bonus", state="confirmed", amount=payment.amount
        ).exclude(pk=payment.pk).count()
        return True if shown > confirmed else None


PROVIDER = ProlificProvider
