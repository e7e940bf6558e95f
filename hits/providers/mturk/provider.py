"""Amazon Mechanical Turk through boto3's `mturk` client (client.py): the one class that talks to MTurk.

Throttling and 5xx faults are retried by botocore's standard retry mode; what still fails with
ThrottlingException or ServiceFault is retried here with a longer backoff; anything else is not.

Idempotency: CreateHITWithHITType carries the posting's request_token as UniqueRequestToken and
RequesterAnnotation. A repeat inside MTurk's 24 hours is answered with an "already exists" error;
the HIT id is taken from the message, else found by RequesterAnnotation. SendBonus carries the
payment's idempotency key as UniqueRequestToken and in its Reason, so a paid bonus can be found.
"""
import logging
import random
import re
import threading
import time
from collections.abc import Mapping
from datetime import timedelta

from botocore.exceptions import ClientError, HTTPClientError
from botocore.exceptions import ConnectionError as BotoConnectionError
from django.conf import settings
from django.utils import timezone

from ... import links
from ..base import Completion, Confirmation, CrowdProvider, Entry, ProviderError, RemoteAssignment, TransientProviderError
from ..options import requirement_defaults
from ..ratelimit import RateLimiter
from .client import build_client, is_live
from .entry import parse as read_entry
from .fees import bonus_fee as mturk_bonus_fee
from .fees import fee_per_assignment as mturk_fee
from .options import OPTIONS
from .posting import external_question, hit_type_params, sizes
from .requirements import check as check_mturk_requirements
from .requirements import qualification_requirements

log = logging.getLogger(__name__)

WORKER_ORIGINS = ("https://worker.mturk.com", "https://workersandbox.mturk.com", "https://www.mturk.com")
RETRYABLE_CODES = {"ServiceFault", "ThrottlingException", "Throttling", "RequestThrottled", "TooManyRequestsException"}
ALREADY_EXISTS = re.compile(r"already (exists|been processed)|unique ?request ?token", re.I)
HIT_ID_IN_MESSAGE = re.compile(r"\b([A-Z0-9]{20,64})\b")
STATUS = {"Submitted": "submitted", "Approved": "approved", "Rejected": "rejected"}
NOT_FOUND = re.compile(r"does not exist|not found", re.I)
TOKEN_WINDOW = timedelta(hours=23)  # MTurk forgets a UniqueRequestToken after 24 hours
HIT_TYPE = "hit_type_id"  # the job's HIT type, once made (JobCrowdConfig.provider_state)


class MTurkProvider(CrowdProvider):
    key = "mturk"
    label = "Amazon Mechanical Turk"
    frame_origins = WORKER_ORIGINS
    bonus_is_idempotent = True
    syncs_blocks = True
    rehearsable = True
    options = OPTIONS
    preview_notice = "This is a preview. Accept the HIT to start working; nothing you do here is saved."
    finished_notice = "This HIT has finished and takes no more work. Please return it if you accepted it."

    def __init__(self, client=None, *, rate=None, outer_retries=None, sleep=time.sleep):
        self._client = client
        self._clients = {}
        self._lock = threading.Lock()
        self.limiter = RateLimiter(
            rate or float(getattr(settings, "QUORUM_MTURK_CALLS_PER_SECOND", 20)),
            burst=int(getattr(settings, "QUORUM_MTURK_CONCURRENCY", 8)),
        )
        self.outer_retries = int(getattr(settings, "QUORUM_MTURK_OUTER_RETRIES", 3) if outer_retries is None else outer_retries)
        self._sleep = sleep
        self._annotation_index = None

    # Client and calls ---------------------------------------------------------------------------
    def client(self, sandbox: bool = True):
        if self._client is not None:
            return self._client
        live = is_live() and not sandbox
        with self._lock:
            if live not in self._clients:
                self._clients[live] = build_client(sandbox=not live)
            return self._clients[live]

    def _call(self, operation: str, sandbox: bool = True, **params):
        client = self.client(sandbox)
        for attempt in range(self.outer_retries + 1):
            self.limiter.acquire()
            try:
                return getattr(client, operation)(**params)
            except ClientError as exc:
                code = exc.response.get("Error", {}).get("Code", "")
                if code not in RETRYABLE_CODES or attempt == self.outer_retries:
                    if code in RETRYABLE_CODES:
                        raise TransientProviderError(f"MTurk {operation}: {code} after retries") from None
                    raise
            except (BotoConnectionError, HTTPClientError) as exc:
                if attempt == self.outer_retries:
                    raise TransientProviderError(f"MTurk {operation}: {type(exc).__name__}") from None
            # Full jitter backoff: spread retries of many threads.
            self._sleep(random.uniform(0, min(8.0, 0.2 * 2**attempt)))
        raise TransientProviderError(f"MTurk {operation} failed")  # pragma: no cover

    @staticmethod
    def _message(exc: ClientError) -> str:
        return exc.response.get("Error", {}).get("Message", "") or str(exc)

    # Fees, requirements, display ------------------------------------------------------------------
    def fee_per_assignment(self, reward, *, assignments_per_posting: int = 1, fee_rate=0):
        return mturk_fee(reward, assignments_per_posting)

    def bonus_fee(self, amount, *, fee_rate=0):
        return mturk_bonus_fee(amount)

    def posting_sizes(self, assignments: int, per_posting: int) -> list[int]:
        return sizes(assignments, per_posting)

    def check_requirements(self, req: dict, errors: dict) -> None:
        check_mturk_requirements(req, errors)

    def describe(self, config) -> str:
        return "sandbox" if self._in_sandbox(config) or not is_live() else "live"

    def _in_sandbox(self, config) -> bool:
        return bool(self.options_of(config)["sandbox"])

    # Postings -------------------------------------------------------------------------------
    def prepare_job(self, config) -> dict:
        """The HIT type of the job (CreateHITType returns the same id for the same properties)."""
        state = dict(config.provider_state or {})
        if state.get(HIT_TYPE):
            return state
        # The job's requirements were validated when saved (configure_crowd); defaults fill what is unset.
        req = {**requirement_defaults(OPTIONS), **(config.requirements or {})}
        params = hit_type_params(config, config.job)
        quals = qualification_requirements(req)
        if quals:
            params["QualificationRequirements"] = quals
        try:
            state[HIT_TYPE] = self._call("create_hit_type", self._in_sandbox(config), **params)["HITTypeId"]
        except ClientError as exc:
            raise ProviderError(f"MTurk refused the HIT type: {self._message(exc)}") from None
        return state

    def create_posting(self, posting, config) -> str:
        type_id = (config.provider_state or {}).get(HIT_TYPE) or self.prepare_job(config)[HIT_TYPE]
        sandbox = self._in_sandbox(config)
        url = links.entry_url(self.key, posting.job_id)
        if posting.created_at and timezone.now() - posting.created_at > TOKEN_WINDOW:
            # MTurk no longer remembers the token: look before creating again.
            found = self.find_posting(posting, sandbox=sandbox)
            if found:
                return found
        try:
            response = self._call(
                "create_hit_with_hit_type",
                sandbox,
                HITTypeId=type_id,
                MaxAssignments=int(posting.assignments),
                LifetimeInSeconds=int(config.lifetime_days) * 86400,
                Question=external_question(url),
                RequesterAnnotation=posting.request_token,
                UniqueRequestToken=posting.request_token,
            )
            return response["HIT"]["HITId"]
        except ClientError as exc:
            message = self._message(exc)
            if not ALREADY_EXISTS.search(message):
                raise ProviderError(f"MTurk refused the HIT: {message}") from None
            match = HIT_ID_IN_MESSAGE.search(message)
            if match:
                return match.group(1)
            found = self.find_posting(posting, sandbox=sandbox, fresh=True)
            if found:
                return found
            raise TransientProviderError("MTurk reports the HIT exists but it is not listed yet") from None

    def find_posting(self, posting, sandbox: bool = True, fresh: bool = False) -> str | None:
        """Find a HIT by RequesterAnnotation (our request token), scanning ListHITs once per minute."""
        now = time.monotonic()
        if fresh or self._annotation_index is None or now - self._annotation_index[0] > 60:
            index, token = {}, None
            while True:
                page = self._call("list_hits", sandbox, MaxResults=100, **({"NextToken": token} if token else {}))
                for hit in page.get("HITs", []):
                    if hit.get("RequesterAnnotation"):
                        index[hit["RequesterAnnotation"]] = hit["HITId"]
                token = page.get("NextToken")
                if not token or not page.get("HITs"):
                    break
            self._annotation_index = (now, index)
        return self._annotation_index[1].get(posting.request_token)

    def close_posting(self, posting) -> None:
        self._call("update_expiration_for_hit", self._sandbox_of(posting), HITId=posting.external_id, ExpireAt=timezone.now())

    # Assignments ----------------------------------------------------------------------------
    def list_assignments(self, posting) -> list[RemoteAssignment]:
        out, token = [], None
        while True:
            params = {"HITId": posting.external_id, "MaxResults": 100, "AssignmentStatuses": list(STATUS)}
            if token:
                params["NextToken"] = token
            page = self._call("list_assignments_for_hit", self._sandbox_of(posting), **params)
            for a in page.get("Assignments", []):
                out.append(
                    RemoteAssignment(
                        external_id=a["AssignmentId"],
                        worker_external_id=a["WorkerId"],
                        status=STATUS.get(a.get("AssignmentStatus"), "submitted"),
                        provider_status=a.get("AssignmentStatus", ""),
                        posting_external_id=a.get("HITId", posting.external_id),
                    )
                )
            token = page.get("NextToken")
            if not token or not page.get("Assignments"):
                return out

    def _sandbox_of(self, obj) -> bool:
        job = getattr(obj, "job", None)
        crowd = getattr(job, "crowd", None) if job is not None else None
        return True if crowd is None else self._in_sandbox(crowd)

    def parse_entry(self, params: Mapping, user=None) -> Entry:
        return read_entry(params)

    def confirm(self, assignment, now) -> Confirmation:
        """Whether MTurk has this assignment, on this HIT, for this worker.

        MTurk shows an assignment only once it is submitted (GetAssignment's statuses are Submitted,
        Approved and Rejected), and the worker submits there after Quorum saved the response. So until
        the assignment's duration (the job's claim timeout) and a margin have passed since the worker
        arrived, "does not exist" means "not yet"; after that it means MTurk never had it.
        """
        posting = assignment.posting
        try:
            found = self._call("get_assignment", self._sandbox_of(posting), AssignmentId=assignment.external_id)
        except ClientError as exc:
            message = self._message(exc)
            if not NOT_FOUND.search(message):
                raise ProviderError(f"MTurk GetAssignment: {message}") from None
            job = posting.job
            margin = timedelta(minutes=int(getattr(settings, "QUORUM_MTURK_CONFIRM_MARGIN_MINUTES", 30)))
            if now < assignment.accepted_at + timedelta(minutes=job.claim_timeout_minutes) + margin:
                return Confirmation(Confirmation.PENDING, "MTurk does not list the assignment yet (not submitted there)")
            return Confirmation(
                Confirmation.REFUTED,
                f"MTurk has no assignment {assignment.external_id} after its duration: the entry was not MTurk's",
            )
        remote = found.get("Assignment", {})
        return Confirmation.of_record(
            assignment, what="MTurk's assignment", posting_external_id=remote.get("HITId", ""),
            worker_external_id=remote.get("WorkerId", ""), status=remote.get("AssignmentStatus", ""),
        )

    def completion(self, assignment, config) -> Completion:
        return Completion(
            url=f"{assignment.return_url.rstrip('/')}/mturk/externalSubmit",
            method="POST",
            fields={"assignmentId": assignment.external_id, "quorumSaved": "true"},
        )

    # Money ----------------------------------------------------------------------------------
    def _settle(self, payment, operation: str, expected: str, **params) -> str:
        assignment = payment.assignment
        sandbox = self._sandbox_of(assignment.posting)
        try:
            self._call(operation, sandbox, AssignmentId=assignment.external_id, **params)
            return expected
        except ClientError as exc:
            # Settling twice is refused; that is success if MTurk already holds our decision.
            status = self._call("get_assignment", sandbox, AssignmentId=assignment.external_id)["Assignment"].get(
                "AssignmentStatus"
            )
            if status == expected:
                return expected
            raise ProviderError(f"MTurk refused to {operation.split('_')[0]}: {self._message(exc)}") from None

    def approve(self, payment) -> str:
        params = {"RequesterFeedback": payment.message[:1024]} if payment.message else {}
        return self._settle(payment, "approve_assignment", "Approved", **params)

    def reject(self, payment) -> str:
        if not payment.message.strip():
            raise ProviderError("MTurk needs a message to reject an assignment")
        return self._settle(payment, "reject_assignment", "Rejected", RequesterFeedback=payment.message[:1024])

    def bonus(self, payment) -> str:
        assignment = payment.assignment
        if payment.created_at and timezone.now() - payment.created_at > TOKEN_WINDOW and self.bonus_was_paid(payment):
            # MTurk may have forgotten the token of an earlier attempt: the listing says it was paid.
            return "already-paid"
        try:
            self._call(
                "send_bonus",
                self._sandbox_of(assignment.posting),
                WorkerId=assignment.worker.external_id,
                BonusAmount=f"{payment.amount:.2f}",
                AssignmentId=assignment.external_id,
                Reason=self.bonus_reason(payment),
                UniqueRequestToken=payment.idempotency_key,
            )
        except ClientError as exc:
            message = self._message(exc)
            if ALREADY_EXISTS.search(message):
                return "already-paid"
            raise ProviderError(f"MTurk refused the bonus: {message}") from None
        return "paid"

    @staticmethod
    def bonus_reason(payment) -> str:
        reason = (payment.message or "Thank you for your careful work.").strip()
        return f"{reason} (ref {payment.idempotency_key})"

    def bonus_was_paid(self, payment) -> bool | None:
        assignment = payment.assignment
        ref = f"(ref {payment.idempotency_key})"
        token = None
        while True:
            params = {"AssignmentId": assignment.external_id, "MaxResults": 100}
            if token:
                params["NextToken"] = token
            page = self._call("list_bonus_payments", self._sandbox_of(assignment.posting), **params)
            if any(ref in (b.get("Reason") or "") for b in page.get("BonusPayments", [])):
                return True
            token = page.get("NextToken")
            if not token or not page.get("BonusPayments"):
                return False

    # Blocks ---------------------------------------------------------------------------------
    def apply_block(self, block, worker_external_id: str, requirements_: Mapping) -> None:
        if block.kind == block.Kind.SOFT:
            qual = requirements_.get("block_qualification_id") or getattr(settings, "QUORUM_MTURK_BLOCK_QUALIFICATION_ID", "")
            if not qual:
                raise ProviderError("a soft block on MTurk needs block_qualification_id in the job's requirements")
            self._call(
                "associate_qualification_with_worker",
                True,
                QualificationTypeId=qual,
                WorkerId=worker_external_id,
                IntegerValue=1,
                SendNotification=False,
            )
        else:
            self._call("create_worker_block", True, WorkerId=worker_external_id, Reason=block.reason[:1024] or "Blocked")


PROVIDER = MTurkProvider
