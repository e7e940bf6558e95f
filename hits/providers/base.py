"""The one interface every crowd provider implements (DESIGN.md, "Providers").

A provider is a package under `hits/providers/` (see docs/crowds.md, "A provider package")
whose `provider.py` subclasses `CrowdProvider`; the registry finds it, so nothing outside the
package names it. The provider owns what differs between crowds: its calls, its fees, its job
options (requirement keys and settings, as a schema: options.py), how its postings are split, how a
worker's entry is read and confirmed.

A provider does the external calls and nothing else: the services in `hits.services` write the
intent rows, hold the budget, and move the states. Every method must be safe to call again with
the same row after a crash: creates and payments carry the row's token, and a lookup method lets
the reconciler find what an interrupted call did.
"""
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from .options import Option
from .options import read as read_options

NO_FEE = Decimal("0.00")


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
    """What a worker brought when arriving from the provider.

    `signed_in`: the worker is a Quorum user (in-house), known by the session rather than by the
    provider's parameters; their assignment is made when they claim (see `hits.receivers`).
    """

    preview: bool
    posting_external_id: str = ""
    assignment_external_id: str = ""
    worker_external_id: str = ""
    return_url: str = ""
    signed_in: bool = False


@dataclass(frozen=True)
class Confirmation:
    """What the provider says about an assignment a response came through.

    `status`: "confirmed" (it exists for that posting and that worker), "refuted" (it does not, and
    will not: an invented entry), or "pending" (the provider cannot tell yet; ask again later).
    """

    CONFIRMED = "confirmed"
    REFUTED = "refuted"
    PENDING = "pending"

    status: str
    reason: str

    @classmethod
    def of_record(cls, assignment, *, what: str, posting_external_id: str, worker_external_id: str, status: str = ""):
        """Confirmed when the provider's record of the assignment (`what`: "MTurk's assignment") is for the
        assignment's own listing and worker; refuted when it belongs to others (an identity pasted onto a
        real assignment id)."""
        if posting_external_id != assignment.posting.external_id or worker_external_id != assignment.worker.external_id:
            return cls(cls.REFUTED, f"{what} {assignment.external_id} belongs to another listing or worker")
        return cls(
            cls.CONFIRMED,
            f"{what} {assignment.external_id} of worker {worker_external_id} on {posting_external_id} exists ({status})",
        )


@dataclass(frozen=True)
class Completion:
    """Where the worker goes after their response is saved: a redirect, or a form POST."""

    url: str
    method: str = "GET"
    fields: dict = field(default_factory=dict)


class CrowdProvider(ABC):
    #: The key stored in `JobCrowdConfig.provider` and every other `provider` column.
    key: str = ""
    #: The provider's name as the builder reads it (the crowd form, the job page).
    label: str = ""
    #: Origins allowed to frame the worker pages (Content-Security-Policy frame-ancestors).
    frame_origins: tuple[str, ...] = ()
    #: Whether a bonus call may be repeated safely with the same payment row.
    bonus_is_idempotent: bool = True
    #: Whether postings at this provider are paid through it (and so need a budget to post).
    paid: bool = True
    #: Whether a response that came through this provider's entry counts only once `confirm` says so.
    needs_confirmation: bool = True
    #: Whether workers sign in to Quorum (in-house) instead of arriving with the provider's parameters;
    #: their assignment is made when they claim.
    workers_sign_in: bool = False
    #: Whether crowd workers are sent back to the provider after a saved submit (the done page).
    sends_worker_back: bool = True
    #: Whether a re-collection's place waits QUORUM_RECOLLECTION_POST_DELAY_SECONDS to be posted with the
    #: others of that while: each posting is a listing of its own at the provider (a study, a HIT).
    batches_recollections: bool = True
    #: Whether blocks are applied at the provider too (`apply_block`).
    syncs_blocks: bool = False
    #: Whether `manage.py rehearse` can run a job against a local fake of this provider (`rehearsal.py`).
    rehearsable: bool = False
    #: The default provider of a job that has no crowd settings (exactly one provider says so).
    default: bool = False
    #: The job options this provider reads (its package's options.py): requirement keys beyond
    #: `hits.policy.requirements.COMMON_KEYS`, and its settings kept in `JobCrowdConfig.provider_options`.
    options: tuple[Option, ...] = ()

    def options_of(self, config) -> dict[str, Any]:
        """The job's settings at this provider, typed, defaults where never stored."""
        return read_options(self.options, config.provider_options)

    # Fees (pure; the package's fees.py) -------------------------------------------------------
    def fee_per_assignment(self, reward, *, assignments_per_posting: int = 1, fee_rate=0):
        """The provider's fee on one assignment of a posting of `assignments_per_posting`, in USD."""
        return NO_FEE

    def fee_on_places(self, reward, places: int, *, assignments_per_posting: int = 1, fee_rate=0):
        """The provider's fee on `places` assignments of one posting of `assignments_per_posting`, in USD: its
        fee per assignment on each, as MTurk bills them. A provider that charges on a listing's total says so."""
        return self.fee_per_assignment(reward, assignments_per_posting=assignments_per_posting, fee_rate=fee_rate) * places

    def bonus_fee(self, amount, *, fee_rate=0):
        return NO_FEE

    def rejection_refusal(self, message: str) -> str | None:
        """Why this provider would refuse to reject with `message` (the worker reads it), or None. Asked
        before a rejection is recorded: one the provider refuses stays unsettled and is paid when its
        review window ends."""
        return None

    def fee_rate(self, config) -> Decimal:
        """The `fee_rate` the fee methods take for this job (a share the account's plan sets), or 0."""
        return Decimal("0")

    # Postings split and preparation (the package's posting.py) ------------------------------------
    def posting_sizes(self, assignments: int, per_posting: int) -> list[int]:
        """How many assignments each posting carries: one posting with every place by default."""
        return [assignments] if assignments else []

    def prepare_job(self, config) -> dict:
        """Set-up shared by the job's postings (MTurk: the HIT type), done once: returns the provider's
        state to keep in `JobCrowdConfig.provider_state` (the same state when there is nothing to do)."""
        return dict(config.provider_state or {})

    #: Whether a worker holds at most one place in a job, whatever the assignment ids they bring (a
    #: second arrival is refused with `one_place_refusal`).
    one_place_per_worker: bool = False
    #: What a worker who arrives for a second place reads, in the provider's words.
    one_place_refusal: str = "You have already taken part in this task."
    #: The preview page's notice, in the provider's words (how a worker starts: accept a HIT, take part in a study).
    preview_notice: str = "This is a preview; nothing you do here is saved."
    #: What a worker reads who opens a finished job's listing, in the provider's words.
    finished_notice: str = "This task has finished and takes no more work."

    def spending_refusal(self) -> str | None:
        """Why this provider may not make calls that spend (create a paid listing, approve, pay a bonus)
        now, saying which setting to change; None when it may. Checked by the services before they
        reserve or write a payment, so a refusal changes nothing."""
        return None

    # Requirements (the package's requirements.py) -------------------------------------------------
    def check_requirements(self, req: dict, errors: dict) -> None:
        """Add to `errors` what is wrong with this provider's requirements beyond each option's own rule
        (which the registry checks first): rules across keys, or on each element of a list."""
        return None

    # Display --------------------------------------------------------------------------------
    def describe(self, config) -> str:
        """A few words after the provider's name on the job page (e.g. MTurk's sandbox or live)."""
        return ""

    def url_patterns(self) -> list:
        """URL patterns the provider adds under /crowd/ (e.g. Prolific's hook receiver)."""
        return []

    #: Whether the provider pushes status changes to Quorum (`subscribe_hooks`, `url_patterns`).
    pushes_status: bool = False

    def subscribe_hooks(self, *, workspace_id: str, target_url: str) -> dict:
        """Have the provider push status changes to `target_url`; returns what to keep (the signing secret)."""
        raise ProviderError(f"{self.key} does not push status changes")

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
    def parse_entry(self, params: Mapping, user=None) -> Entry:
        """Read the provider's query parameters on the entry URL (and the signed-in user, for providers
        whose workers sign in); EntryError when they are unusable."""

    @abstractmethod
    def completion(self, assignment, config) -> Completion:
        """Where to send the worker once the response is committed in Quorum."""

    def confirm(self, assignment, now) -> Confirmation:
        """Whether the assignment a response came through exists at the provider for that posting and
        worker. Called only when `needs_confirmation`; a network failure raises TransientProviderError."""
        return Confirmation(Confirmation.CONFIRMED, "the provider keeps no record of its own")

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
