"""The contract every crowd provider passes (DESIGN.md, "Providers").

A provider's test module subclasses `ProviderContract` and supplies a small world: how to count the
listings at the provider, how a simulated worker takes and submits work there, and how many bonuses
the provider paid. The tests here then drive Quorum's services and views exactly as production does.
"""

import pytest
from django.test import TestCase

from annotation.models import Response, Slot
from annotation.services import claims
from hits import providers
from hits.models import JobCrowdConfig, Payment, Posting, ProviderAssignment
from hits.services.config import configure_crowd
from hits.services.confirmation import confirm_assignment
from hits.services.payments import approve_assignments, bonus_assignments, reject_assignments, soft_reject_assignments
from hits.services.postings import BudgetExceeded, launch_crowd_job, post_job, send_posting
from hits.services.reconcile import reconcile_job
from tests.hits.conftest import ANSWERS, make_job


def submit_response(**kwargs):
    """Submit as the task page does, running the on-commit signal the test transaction would hold back."""
    with TestCase.captureOnCommitCallbacks(execute=True):
        return claims.submit_response(**kwargs)


LONG_REJECTION = (
    "Your rewrite did not keep the slot values of the original turn, which the instructions ask for in "
    "every rewrite; we cannot use this answer."
)


class ProviderContract:
    provider_key = ""

    # The world each provider's module supplies ----------------------------------------------------
    def listings(self) -> int:
        raise NotImplementedError

    def take(self, client, posting, worker_id):
        """A worker takes the posting at the provider and arrives at Quorum; returns (response, assignment id)."""
        raise NotImplementedError

    def submit_at_provider(self, posting, assignment_external_id):
        raise NotImplementedError

    def settled_status(self, assignment_external_id) -> str:
        raise NotImplementedError

    def bonuses_paid(self, assignment_external_id) -> int:
        raise NotImplementedError

    def end_without_response(self, posting, assignment_external_id):
        """The worker's assignment ends at the provider without a response in Quorum."""
        raise NotImplementedError

    def assert_ended_without_response(self, assignment, summary):
        """What the reconciler made of it: settled as the provider's rules say."""
        raise NotImplementedError

    # Helpers ----------------------------------------------------------------------------------
    def launched_job(self, turns=3, redundancy=1, budget="100"):
        job = make_job(turns=turns, redundancy=redundancy, name=f"{self.provider_key} job")
        configure_crowd(job, provider=self.provider_key, budget=budget, assignments_per_posting=2)
        launch_crowd_job(job)
        post_job(job, concurrency=1)
        job.refresh_from_db()
        return job

    def submitted_assignment(self, client, job, worker_id) -> ProviderAssignment:
        posting = next(
            p for p in Posting.objects.filter(job=job, state=Posting.State.CREATED).order_by("seq")
            if p.assignments_at_provider.count() < p.assignments
        )
        response, assignment_id = self.take(client, posting, worker_id)
        assignment = ProviderAssignment.objects.get(provider=self.provider_key, external_id=assignment_id)
        submit_response(slot_id=assignment.slot_id, worker=assignment.worker, answers=ANSWERS)
        self.submit_at_provider(posting, assignment_id)
        confirm_assignment(assignment.pk)  # what the prompt task, the reconciler or a hook does
        assignment.refresh_from_db()
        assert assignment.response.status == Response.Status.ACCEPTED
        return assignment

    # The contract -----------------------------------------------------------------------------
    def test_posting_creates_listings_and_a_repeat_creates_none(self, db):
        job = self.launched_job(turns=3)
        postings = list(Posting.objects.filter(job=job))
        assert postings and all(p.state == Posting.State.CREATED and p.external_id for p in postings)
        before = self.listings()
        # A crash after the provider created the listing, before Quorum recorded it:
        first = postings[0]
        Posting.objects.filter(pk=first.pk).update(state=Posting.State.INTENDED, external_id=None, attempted_at=None)
        again = send_posting(first.pk, grace_seconds=0)
        assert again.state == Posting.State.CREATED and again.external_id == first.external_id
        assert self.listings() == before

    def test_budget_refuses_a_launch_it_cannot_pay(self, db):
        job = make_job(turns=3, name=f"{self.provider_key} dear job")
        configure_crowd(job, provider=self.provider_key, budget="0.10")
        before = self.listings()
        with pytest.raises(BudgetExceeded):
            launch_crowd_job(job)
        assert self.listings() == before and not Posting.objects.filter(job=job).exists()

    def test_worker_is_sent_on_only_after_the_response_is_saved(self, db, client, work_tokens):
        job = self.launched_job(turns=2)
        posting = Posting.objects.filter(job=job).first()
        response, assignment_id = self.take(client, posting, "A1WORKERONE")
        assert response.status_code == 302 and response["Location"].startswith("/work/")
        slot_id, worker_id = work_tokens.read_token(response["Location"].split("/")[2])
        slot = Slot.objects.get(pk=slot_id)
        assert slot.worker_id == worker_id
        assignment = ProviderAssignment.objects.get(provider=self.provider_key, external_id=assignment_id)
        assert slot.state == Slot.State.CLAIMED and assignment.slot_id == slot.pk
        assert slot.worker.external_id.upper() == "A1WORKERONE" and slot.worker.provider == self.provider_key

        # Not saved yet: the done page refuses to send the worker on.
        from hits.links import done_url
        from hits.receivers import submit_redirect

        assert client.get(done_url(assignment.pk)).status_code == 409
        saved = submit_response(slot_id=slot.pk, worker=slot.worker, answers=ANSWERS)
        url = submit_redirect(response=saved)
        assignment.refresh_from_db()
        assert assignment.state == ProviderAssignment.State.SUBMITTED and assignment.response_id == saved.pk
        self.assert_completion(client.get(url), assignment)

    def assert_completion(self, response, assignment):
        raise NotImplementedError

    def test_reconcile_repairs_an_assignment_that_ended_without_a_response_here(self, db, client, work_tokens):
        job = self.launched_job(turns=2)
        posting = Posting.objects.filter(job=job).first()
        _, assignment_id = self.take(client, posting, "A1WORKERTWO")
        slot_id = ProviderAssignment.objects.get(external_id=assignment_id).slot_id
        self.end_without_response(posting, assignment_id)
        summary = reconcile_job(job.pk, grace_seconds=0)
        assignment = ProviderAssignment.objects.get(external_id=assignment_id)
        assert assignment.state != ProviderAssignment.State.ACCEPTED
        assert Slot.objects.get(pk=slot_id).state == Slot.State.OPEN  # the item goes to someone else
        self.assert_ended_without_response(assignment, summary)
        again = reconcile_job(job.pk, grace_seconds=0)
        assert again["settled"] == {} and again["payments"] == {}  # nothing twice

    def test_a_response_counts_only_once_the_provider_confirms_it(self, db, client, work_tokens):
        job = self.launched_job(turns=2)
        posting = Posting.objects.filter(job=job).first()
        _, assignment_id = self.take(client, posting, "A1WORKERFFF")
        assignment = ProviderAssignment.objects.get(provider=self.provider_key, external_id=assignment_id)
        response = submit_response(slot_id=assignment.slot_id, worker=assignment.worker, answers=ANSWERS)
        if providers.get(self.provider_key).needs_confirmation:
            self.submit_at_provider(posting, assignment_id)
            response.refresh_from_db()
            if response.status == Response.Status.AWAITING_CONFIRMATION:
                # Not counted, not paid, until the provider says the assignment is its own.
                assert not Response.objects.counted().filter(pk=response.pk).exists()
                result = approve_assignments([assignment.pk])[0]
                assert not result.ok and "not confirmed" in result.error
                assert confirm_assignment(assignment.pk) == "confirmed"
        response.refresh_from_db()
        assert Response.objects.counted().filter(pk=response.pk).exists()
        assert response.transitions.filter(to_status=Response.Status.ACCEPTED).exists()
        assert approve_assignments([assignment.pk])[0].ok

    def test_bulk_settlement_gives_a_result_per_element(self, db, client, work_tokens):
        job = self.launched_job(turns=3)
        a1 = self.submitted_assignment(client, job, "A1WORKERAAA")
        a2 = self.submitted_assignment(client, job, "A1WORKERBBB")
        a3 = self.submitted_assignment(client, job, "A1WORKERCCC")
        results = approve_assignments([a1.pk, 987654])
        assert [r.ok for r in results] == [True, False] and "no such" in results[1].error, results
        results = reject_assignments([a2.pk, a1.pk], LONG_REJECTION)
        assert [r.ok for r in results] == [True, False] and "approved" in results[1].error
        assert soft_reject_assignments([a3.pk])[0].ok
        for a, status, response_status in ((a1, "approved", "accepted"), (a2, "rejected", "rejected"), (a3, "approved", "excluded")):
            a.refresh_from_db()
            assert a.state == status and a.response.status == response_status
            assert self.settled_status(a.external_id) == status
        # Approving again is not a second settlement.
        assert approve_assignments([a1.pk])[0].ok
        assert Payment.objects.filter(assignment=a1, kind="approve").count() == 1

    def test_a_bonus_asked_twice_is_paid_once_and_counted_against_the_budget(self, db, client, work_tokens):
        job = self.launched_job(turns=2)
        a1 = self.submitted_assignment(client, job, "A1WORKERDDD")
        committed = JobCrowdConfig.objects.get(job=job).committed
        first = bonus_assignments([(a1.pk, "0.25", "Thorough rewrites")])
        second = bonus_assignments([(a1.pk, "0.25", "Thorough rewrites")])
        assert first[0].ok and second[0].ok
        assert self.bonuses_paid(a1.external_id) == 1
        assert Payment.objects.filter(assignment=a1, kind="bonus").count() == 1
        assert JobCrowdConfig.objects.get(job=job).committed > committed

    def test_a_bonus_beyond_the_budget_is_refused(self, db, client, work_tokens):
        job = self.launched_job(turns=2, budget="5")
        a1 = self.submitted_assignment(client, job, "A1WORKEREEE")
        results = bonus_assignments([(a1.pk, "50.00", "Far too generous")])
        assert not results[0].ok and "budget" in results[0].error
        assert self.bonuses_paid(a1.external_id) == 0
