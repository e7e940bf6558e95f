"""Every provider passes the same contract (tests/hits/contract.py), each against its own fake."""
from urllib.parse import urlencode

import pytest

from annotation.models import Worker
from annotation.services.claims import claim_next_slot
from hits.links import completion_code
from hits.models import Payment, Posting, ProviderAssignment
from tests.hits.contract import ProviderContract


class TestInHouse(ProviderContract):
    provider_key = "inhouse"
    has_entry = False

    def listings(self):
        return Posting.objects.filter(provider="inhouse", state="created").count()

    def submitted_assignment(self, client, job, worker_id):
        # In-house annotators claim in the Quorum UI; the ledger keeps an assignment per claim.
        from tests.hits.conftest import ANSWERS
        from tests.hits.contract import submit_response

        worker, _ = Worker.objects.get_or_create(provider="inhouse", external_id=worker_id)
        slot = claim_next_slot(job=job, worker=worker)
        posting = Posting.objects.filter(job=job).first()
        assignment = ProviderAssignment.objects.create(
            posting=posting, provider="inhouse", external_id=f"slot-{slot.pk}", worker=worker, slot=slot
        )
        submit_response(slot_id=slot.pk, worker=worker, answers=ANSWERS)
        assignment.refresh_from_db()
        return assignment

    def settled_status(self, assignment_external_id):
        return ProviderAssignment.objects.get(external_id=assignment_external_id).state

    def bonuses_paid(self, assignment_external_id):
        return Payment.objects.filter(
            assignment__external_id=assignment_external_id, kind="bonus", state="confirmed"
        ).count()

    def test_budget_refuses_a_launch_it_cannot_pay(self, db):
        pytest.skip("in-house work has no provider cost")

    def test_a_bonus_beyond_the_budget_is_refused(self, db):
        pytest.skip("in-house bonuses are a ledger entry")


class TestMTurk(ProviderContract):
    provider_key = "mturk"

    @pytest.fixture(autouse=True)
    def _fake(self, fake_mturk):
        self.fake = fake_mturk

    def listings(self):
        return len(self.fake.hits)

    def take(self, client, posting, worker_id):
        assignment_id = self.fake.accept(posting.external_id, worker_id)
        query = urlencode({
            "assignmentId": assignment_id, "hitId": posting.external_id, "workerId": worker_id,
            "turkSubmitTo": "https://workersandbox.mturk.com",
        })
        return client.get(f"/crowd/mturk/{posting.job_id}/?{query}"), assignment_id

    def submit_at_provider(self, posting, assignment_external_id):
        self.fake.submit(assignment_external_id)

    def settled_status(self, assignment_external_id):
        return self.fake.assignments[assignment_external_id]["AssignmentStatus"].lower()

    def bonuses_paid(self, assignment_external_id):
        return self.fake.bonuses_per_assignment()[assignment_external_id]

    def assert_completion(self, response, assignment):
        body = response.content.decode()
        assert response.status_code == 200
        assert 'action="https://workersandbox.mturk.com/mturk/externalSubmit"' in body
        assert f'name="assignmentId" value="{assignment.external_id}"' in body


class TestProlific(ProviderContract):
    provider_key = "prolific"

    @pytest.fixture(autouse=True)
    def _fake(self, fake_prolific):
        self.fake = fake_prolific

    def listings(self):
        return len(self.fake.studies)

    def take(self, client, posting, worker_id):
        pid = worker_id.lower()
        session = self.fake.start_submission(posting.external_id, pid)
        query = urlencode({"PROLIFIC_PID": pid, "STUDY_ID": posting.external_id, "SESSION_ID": session})
        return client.get(f"/crowd/prolific/{posting.job_id}/?{query}"), session

    def submit_at_provider(self, posting, assignment_external_id):
        self.fake.complete(assignment_external_id)

    def settled_status(self, assignment_external_id):
        return self.fake.submissions[assignment_external_id]["status"].lower()

    def bonuses_paid(self, assignment_external_id):
        pid = self.fake.submissions[assignment_external_id]["participant_id"]
        return self.fake.payments_per_participant()[pid]

    def assert_completion(self, response, assignment):
        code = completion_code(assignment.posting.job_id)
        assert response.status_code == 302
        assert response["Location"] == f"https://app.prolific.com/submissions/complete?cc={code}"
