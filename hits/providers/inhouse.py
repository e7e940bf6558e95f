"""In-house annotators: they log in and take work from the database queue; nothing is external.

A posting is the job's queue itself, so creating one is a local act; approvals and bonuses are
recorded in Quorum's ledger (the Payment rows) for the organizer to pay by their own means.
"""
from collections.abc import Mapping

from django.urls import reverse

from .base import Completion, CrowdProvider, Entry, EntryError, RemoteAssignment


class InHouseProvider(CrowdProvider):
    key = "inhouse"
    frame_origins = ()
    paid = False

    def create_posting(self, posting, config) -> str:
        return f"inhouse-{posting.request_token}"

    def find_posting(self, posting) -> str | None:
        return f"inhouse-{posting.request_token}" if posting.attempts else None

    def list_assignments(self, posting) -> list[RemoteAssignment]:
        # The database is the provider: what Quorum holds is all there is.
        return [
            RemoteAssignment(a.external_id, a.worker.external_id, a.state, a.state, posting.external_id or "")
            for a in posting.assignments_at_provider.select_related("worker")
        ]

    def parse_entry(self, params: Mapping) -> Entry:
        raise EntryError("In-house annotators sign in to Quorum; there is no provider entry link.")

    def completion(self, assignment, config) -> Completion:
        return Completion(url=reverse("home"))

    def approve(self, payment) -> str:
        return "ledger"

    def reject(self, payment) -> str:
        return "ledger"

    def bonus(self, payment) -> str:
        return "ledger"

    def bonus_was_paid(self, payment) -> bool | None:
        return payment.state == payment.State.CONFIRMED
