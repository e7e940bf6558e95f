"""Every provider passes the same contract (tests/hits/contract.py), each against its own fake."""
from datetime import timedelta
from urllib.parse import urlencode

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from annotation.services.claims import release_expired_claims
from hits.links import completion_code
from hits.models import Payment, Posting, ProviderAssignment
from quorum.roles import make_annotator
from tests.hits.contract import ProviderContract


class TestInHouse(ProviderContract):
    """In-house annotators sign in and arrive through /crowd/inhouse/<job>/; their assignment is made when
    they claim, the database is the provider, and the ledger records settlements and bonuses."""

    provider_key = "inhouse"

    def listings(self):
        return Posting.objects.filter(provider="inhouse", state="created").count()

    def take(self, client, posting, worker_id):
        user = User.objects.create_user(worker_id)
        make_annotator(user)
        client.force_login(user)
        response = client.get(f"/crowd/inhouse/{posting.job_id}/")
        assignment = ProviderAssignment.objects.filter(worker__user=user).latest("pk")
        return response, assignment.external_id

    def submit_at_provider(self, posting, assignment_external_id):
        pass  # the response saved in Quorum is the submission

    def end_without_response(self, posting, assignment_external_id):
        # The annotator walks away: the claim expires and the periodic sweep frees it.
        release_expired_claims(now=timezone.now() + timedelta(days=1))

    def assert_ended_without_response(self, assignment, summary):
        assert assignment.state == ProviderAssignment.State.RETURNED and assignment.place is None
        assert not assignment.payments.exists() and summary["settled"] == {}

    def settled_status(self, assignment_external_id):
        return ProviderAssignment.objects.get(external_id=assignment_external_id).state

    def bonuses_paid(self, assignment_external_id):
        return Payment.objects.filter(
            assignment__external_id=assignment_external_id, kind="bonus", state="confirmed"
        ).count()

    def assert_completion(self, response, assignment):
        # On to the next item: back through the job's entry.
        assert response.status_code == 302
        assert response["Location"] == f"/crowd/inhouse/{assignment.posting.job_id}/"


class CrowdWorld:
    def end_without_response(self, posting, assignment_external_id):
        self.submit_at_provider(posting, assignment_external_id)  # submitted there, never here

    def assert_ended_without_response(self, assignment, summary):
        assert assignment.missing_response
        # Paid (the default), settled before the provider's deadline.
        assert assignment.state == ProviderAssignment.State.APPROVED
        assert self.settled_status(assignment.external_id) == "approved"
        assert summary["settled"] == {"approve": 1}


class TestMTurk(CrowdWorld, ProviderContract):
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


class TestProlific(CrowdWorld, ProviderContract):
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
