"""The one interface every crowd provider implements (DESIGN.md, "Providers").

A provider does the external calls and nothing else: the services in `hits.services` write the
intent rows, hold the budget, and move the states. Every method must be safe to call again with
the same row after a crash: creates and payments carry the row's token, and a lookup method lets
the reconciler find what an interrupted call did.
"""
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field


class ProviderError(Exception):
    """The provider refused the request; retrying the same request will not help."""

    retryable = False


class TransientProviderError(ProviderError):
    """Throttling, a service fault or a network failure: the same request may be retried later."""

    retryable = True


class EntryError(ValueError):
    """The worker arrived with parameters Quorum cannot use; the message says what is wrong."""


@dataclass(frozen=True)
class RemoteAssignment:
    """An assignment (MTurk) or submission (Prolific) as the provider reports it.

    `status` is normalized to ProviderAssignment states: accepted, submitted, approved, rejected,
    returned.
    """

    external_id: str
    worker_external_id: str
    status: str
    provider_status: str
    posting_external_id: str = ""


@dataclass(frozen=True)
class Entry:
    """What a worker brought when arriving from the provider."""

    preview: bool
    posting_external_id: str = ""
    assignment_external_id: str = ""
    worker_external_id: str = ""
    return_url: str = ""


@dataclass(frozen=True)
class Completion:
    """Where the worker goes after their response is saved: a redirect, or a form POST."""

    url: str
    method: str = "GET"
    fields: dict = field(default_factory=dict)


class CrowdProvider(ABC):
    key: str = ""
    #: Origins allowed to frame the worker pages (Content-Security-Policy frame-ancestors).
    frame_origins: tuple[str, ...] = ()
    #: Whether a bonus call may be repeated safely with the same payment row.
    bonus_is_idempotent: bool = True
    #: Whether postings at this provider cost money (and so need a budget).
    paid: bool = True

    # Postings -------------------------------------------------------------------------------
    @abstractmethod
    def create_posting(self, posting, config) -> str:
        """Create the listing for an intended posting; return its external id.

        Must be idempotent for the posting's request_token: a repeat returns the first listing's id.
        """

    @abstractmethod
    def find_posting(self, posting) -> str | None:
        """The external id of the listing made for this posting, if an earlier call made one."""

    def close_posting(self, posting) -> None:
        """Stop new workers from taking the posting (expire the HIT, stop the study)."""
        return None

    # Assignments ----------------------------------------------------------------------------
    @abstractmethod
    def list_assignments(self, posting) -> list[RemoteAssignment]:
        """Every assignment the provider knows for the posting."""

    @abstractmethod
    def parse_entry(self, params: Mapping) -> Entry:
        """Read the provider's query parameters on the entry URL; EntryError when they are unusable."""

    @abstractmethod
    def completion(self, assignment, config) -> Completion:
        """Where to send the worker once the response is committed in Quorum."""

    # Money ----------------------------------------------------------------------------------
    @abstractmethod
    def approve(self, payment) -> str:
        """Approve (pay) the payment's assignment. Idempotent. Returns a provider reference."""

    @abstractmethod
    def reject(self, payment) -> str:
        """Reject the payment's assignment with payment.message. Idempotent."""

    @abstractmethod
    def bonus(self, payment) -> str:
        """Pay payment.amount as a bonus. Only called again for a sent payment if bonus_is_idempotent."""

    def prepare_bonus(self, payment) -> str:
        """A step before the paying call whose result is recorded (e.g. Prolific's bulk bonus draft)."""
        return ""

    def bonus_was_paid(self, payment) -> bool | None:
        """Whether the provider shows the bonus as paid; None when it cannot tell."""
        return None

    # Blocks ---------------------------------------------------------------------------------
    def apply_block(self, block, worker_external_id: str, requirements: Mapping) -> None:
        """Tell the provider about a block (MTurk: block qualification or worker block)."""
        return None
