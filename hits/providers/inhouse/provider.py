"""In-house annotators: they sign in and take work from the database queue; nothing is external.

A posting is the job's queue itself, so creating one is a local act. An assignment is made when an
annotator claims a slot (`hits.receivers.on_slot_claimed`), exactly as a crowd worker's is made when
they arrive, so settlements, bonuses and the budget work the same way. Approvals, rejections and
bonuses are recorded in Quorum's ledger (the Payment rows) for the organizer to pay by their own
means; the work costs its reward, with no provider fee, and a budget, when set, caps it.
"""
from collections.abc import Mapping

from django.utils import timezone

from annotation.models import Worker

from ... import links
from ..base import Completion, CrowdProvider, Entry, RemoteAssignment
from .entry import parse as read_entry


class InHouseProvider(CrowdProvider):
    #: Annotation's own name for a worker who signs in to Quorum (`Worker.INHOUSE`): their crowd is this one.
    key = Worker.INHOUSE
    label = "In-house"
    frame_origins = ()
    paid = False
    default = True
    workers_sign_in = True
    needs_confirmation = False  # the annotator signed in: Quorum is the provider
    sends_worker_back = False  # annotation's own "next item" redirect serves them
    batches_recollections = False  # a place is only a row here: annotators may take it at once

    def create_posting(self, posting, config) -> str:
        return f"inhouse-{posting.request_token}"

    def find_posting(self, posting) -> str | None:
        return f"inhouse-{posting.request_token}" if posting.attempts else None

    def list_assignments(self, posting) -> list[RemoteAssignment]:
        """The database is the provider: an accepted assignment whose claim is gone (skipped, or expired
        and freed) without a response is returned; everything else is as Quorum holds it."""
        now = timezone.now()
        rows = posting.assignments_at_provider.select_related("worker", "slot")
        out = []
        for a in rows:
            status = a.state
            live = a.slot_id and a.slot.state == a.slot.State.CLAIMED and a.slot.worker_id == a.worker_id
            if a.state == a.State.ACCEPTED and not a.response_id and not (live and a.slot.expires_at > now):
                status = a.State.RETURNED
            out.append(RemoteAssignment(a.external_id, a.worker.external_id, status, status, posting.external_id or ""))
        return out

    def parse_entry(self, params: Mapping, user=None) -> Entry:
        return read_entry(user)

    def completion(self, assignment, config) -> Completion:
        # Back to the job's entry, which claims the annotator's next item (or says none is left).
        return Completion(url=links.entry_path(self.key, config.job_id))

    def approve(self, payment) -> str:
        return "ledger"

    def reject(self, payment) -> str:
        return "ledger"

    def bonus(self, payment) -> str:
        return "ledger"

    def bonus_was_paid(self, payment) -> bool | None:
        return payment.state == payment.State.CONFIRMED


PROVIDER = InHouseProvider
