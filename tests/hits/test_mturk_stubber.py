"""The MTurk provider through boto3 with botocore's Stubber: every request is validated against
botocore's MTurk service model, and the expected parameters are checked exactly."""
from decimal import Decimal as D

import boto3
import pytest
from botocore.stub import ANY, Stubber

from hits.models import Payment, Posting, ProviderAssignment
from hits.providers import ProviderError, TransientProviderError
from hits.providers import mturk as mturk_module
from hits.providers.mturk import MTurkProvider
from hits.services.config import configure_crowd
from hits.services.postings import reserve_postings

HIT_ID = "3AAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
TYPE_ID = "3TYPETYPETYPETYPETYPETYPETYPE1"


@pytest.fixture
def stubbed(aws_env):
    client = boto3.session.Session().client("mturk", region_name="us-east-1", endpoint_url="https://mturk.invalid")
    with Stubber(client) as stubber:
        yield MTurkProvider(client=client, rate=1000, outer_retries=2, sleep=lambda s: None), stubber
        stubber.assert_no_pending_responses()


@pytest.fixture
def posting(job_factory):
    job = job_factory(turns=2, reward="0.50")
    config = configure_crowd(job, provider="mturk", budget="10", assignments_per_posting=2, auto_approval_days=3)
    config.provider_state = {"hit_type_id": TYPE_ID}  # the HIT type made once per job (MTurk's own state)
    config.save()
    return reserve_postings(job)[0]


def _create_params(posting):
    return {
        "HITTypeId": TYPE_ID,
        "MaxAssignments": 2,
        "LifetimeInSeconds": 7 * 86400,
        "Question": ANY,
        "RequesterAnnotation": posting.request_token,
        "UniqueRequestToken": posting.request_token,
    }


def test_hit_type_carries_reward_deadline_and_raddle_requirements(stubbed, posting):
    provider, stubber = stubbed
    config = posting.job.crowd
    config.provider_state = {}
    stubber.add_response(
        "create_hit_type",
        {"HITTypeId": TYPE_ID},
        {
            "AutoApprovalDelayInSeconds": 3 * 86400,
            "AssignmentDurationInSeconds": 30 * 60,
            "Reward": "0.50",
            "Title": "hits job",
            "Keywords": ANY,
            "Description": "Rewrite the user's turn.",
            "QualificationRequirements": [
                {"QualificationTypeId": "00000000000000000071", "Comparator": "EqualTo", "LocaleValues": [{"Country": "US"}]},
                {"QualificationTypeId": "000000000000000000L0", "Comparator": "GreaterThanOrEqualTo", "IntegerValues": [90]},
            ],
        },
    )
    assert provider.prepare_job(config) == {"hit_type_id": TYPE_ID}


def test_create_hit_is_an_external_question_with_our_token(stubbed, posting):
    provider, stubber = stubbed
    stubber.add_response("create_hit_with_hit_type", {"HIT": {"HITId": HIT_ID}}, _create_params(posting))
    assert provider.create_posting(posting, posting.job.crowd) == HIT_ID


class _QuestionFor:
    """Matches an ExternalQuestion whose ExternalURL is the job's entry URL."""

    def __init__(self, url):
        self.url = url

    def __eq__(self, xml):
        return "ExternalQuestion.xsd" in xml and f"<ExternalURL>{self.url}</ExternalURL>" in xml

    def __repr__(self):
        return f"ExternalQuestion({self.url})"


def test_the_question_sends_workers_to_the_entry_url(stubbed, posting):
    provider, stubber = stubbed
    expected = dict(_create_params(posting), Question=_QuestionFor(f"https://quorum.example.org/crowd/mturk/{posting.job_id}/"))
    stubber.add_response("create_hit_with_hit_type", {"HIT": {"HITId": HIT_ID}}, expected)
    assert provider.create_posting(posting, posting.job.crowd) == HIT_ID


def test_hit_already_exists_is_recovered_from_the_message(stubbed, posting):
    provider, stubber = stubbed
    stubber.add_client_error(
        "create_hit_with_hit_type",
        service_error_code="RequestError",
        service_message=f'The HIT with ID "{HIT_ID}" already exists. (1700000000000)',
        expected_params=_create_params(posting),
    )
    assert provider.create_posting(posting, posting.job.crowd) == HIT_ID


def test_hit_already_exists_without_an_id_is_found_by_requester_annotation(stubbed, posting):
    provider, stubber = stubbed
    stubber.add_client_error(
        "create_hit_with_hit_type",
        service_error_code="RequestError",
        service_message='The request token "x" has already been processed. (1700000000000)',
        expected_params=_create_params(posting),
    )
    stubber.add_response(
        "list_hits",
        {"HITs": [{"HITId": "3OTHEROTHEROTHEROTHEROTHER0001", "RequesterAnnotation": "someone-else"},
                  {"HITId": HIT_ID, "RequesterAnnotation": posting.request_token}]},
        {"MaxResults": 100},
    )
    assert provider.create_posting(posting, posting.job.crowd) == HIT_ID


def test_throttling_and_service_faults_are_retried_other_errors_are_not(stubbed, posting):
    provider, stubber = stubbed
    stubber.add_client_error("create_hit_with_hit_type", "ThrottlingException", "Rate exceeded", 400)
    stubber.add_client_error("create_hit_with_hit_type", "ServiceFault", "Internal", 500)
    stubber.add_response("create_hit_with_hit_type", {"HIT": {"HITId": HIT_ID}}, _create_params(posting))
    assert provider.create_posting(posting, posting.job.crowd) == HIT_ID

    stubber.add_client_error("create_hit_with_hit_type", "RequestError", "Reward is too low", 400)
    with pytest.raises(ProviderError, match="Reward is too low") as err:
        provider.create_posting(posting, posting.job.crowd)
    assert not err.value.retryable


def test_persistent_throttling_becomes_a_transient_error(stubbed, posting):
    provider, stubber = stubbed
    for _ in range(3):  # the first call and two retries
        stubber.add_client_error("create_hit_with_hit_type", "ThrottlingException", "Rate exceeded", 400)
    with pytest.raises(TransientProviderError):
        provider.create_posting(posting, posting.job.crowd)


def _assignment(posting, worker_id="A1WORKER", external_id="3ASSIGNMENTASSIGNMENT000000001"):
    from annotation.models import Worker

    Posting.objects.filter(pk=posting.pk).update(state="created", external_id=HIT_ID)
    posting.refresh_from_db()
    worker, _ = Worker.objects.get_or_create(provider="mturk", external_id=worker_id)
    return ProviderAssignment.objects.create(
        posting=posting, provider="mturk", external_id=external_id, worker=worker, state="submitted"
    )


def test_approve_reject_and_bonus_requests(stubbed, posting):
    provider, stubber = stubbed
    assignment = _assignment(posting)
    approve = Payment(assignment=assignment, kind="approve", idempotency_key="quorum-a1-settle", message="Thanks!")
    stubber.add_response("approve_assignment", {}, {"AssignmentId": assignment.external_id, "RequesterFeedback": "Thanks!"})
    assert provider.approve(approve) == "Approved"

    reject = Payment(assignment=assignment, kind="reject", idempotency_key="quorum-a1-settle", message="Slot values missing.")
    stubber.add_response(
        "reject_assignment", {}, {"AssignmentId": assignment.external_id, "RequesterFeedback": "Slot values missing."}
    )
    assert provider.reject(reject) == "Rejected"

    bonus = Payment(assignment=assignment, kind="bonus", amount=D("0.25"), idempotency_key="quorum-a1-babc", message="Great work")
    stubber.add_response(
        "send_bonus",
        {},
        {
            "WorkerId": "A1WORKER",
            "BonusAmount": "0.25",
            "AssignmentId": assignment.external_id,
            "Reason": "Great work (ref quorum-a1-babc)",
            "UniqueRequestToken": "quorum-a1-babc",
        },
    )
    assert provider.bonus(bonus) == "paid"


def test_a_repeated_bonus_token_counts_as_paid(stubbed, posting):
    provider, stubber = stubbed
    assignment = _assignment(posting)
    bonus = Payment(assignment=assignment, kind="bonus", amount=D("0.25"), idempotency_key="quorum-a1-babc", message="x")
    stubber.add_client_error("send_bonus", "RequestError", 'The idempotency token "quorum-a1-babc" has already been processed.')
    assert provider.bonus(bonus) == "already-paid"


def test_approving_an_already_approved_assignment_is_success(stubbed, posting):
    provider, stubber = stubbed
    assignment = _assignment(posting)
    stubber.add_client_error("approve_assignment", "RequestError", "This operation can be called with a status of: Submitted")
    stubber.add_response(
        "get_assignment",
        {"Assignment": {"AssignmentId": assignment.external_id, "AssignmentStatus": "Approved"}},
        {"AssignmentId": assignment.external_id},
    )
    assert provider.approve(Payment(assignment=assignment, kind="approve", idempotency_key="k")) == "Approved"


def test_sandbox_unless_live_is_set_explicitly(settings, aws_env):
    settings.QUORUM_MTURK_ENDPOINT_URL = ""
    settings.QUORUM_MTURK_LIVE = False
    assert mturk_module.build_client(sandbox=False).meta.endpoint_url == mturk_module.SANDBOX_ENDPOINT
    settings.QUORUM_MTURK_LIVE = True
    assert mturk_module.build_client(sandbox=True).meta.endpoint_url == mturk_module.SANDBOX_ENDPOINT
    assert mturk_module.build_client(sandbox=False).meta.endpoint_url == mturk_module.LIVE_ENDPOINT
