"""MTurk for `manage.py rehearse`: the local fake, a provider pointed at it (a boto3 client with dummy
credentials, made here so that no real credential or endpoint is involved), and how a simulated
worker takes a HIT there before arriving at Quorum's entry URL."""
from botocore.config import Config

from ...fakes import FakeMTurk
from .client import new_session
from .provider import MTurkProvider

#: Options a rehearsal copy has whatever the job's (hits.services.rehearsal): never live.
FORCED_OPTIONS = {"sandbox": True}


def world(seed: int):
    """(fake server, provider instance pointed at it, settings for the run given the started fake)."""
    fake = FakeMTurk(seed=seed)
    session = new_session(aws_access_key_id="REHEARSAL", aws_secret_access_key="rehearsal", region_name="us-east-1")
    client = session.client("mturk", endpoint_url=fake.url, config=Config(retries={"mode": "standard", "total_max_attempts": 2}))
    instance = MTurkProvider(client=client, rate=1000, outer_retries=0, sleep=lambda s: None)
    return fake, instance, lambda f: {"QUORUM_MTURK_ENDPOINT_URL": f.url, "QUORUM_MTURK_SUBMIT_HOSTS": [f.url]}


def worker_id(tag: str, number: int) -> str:
    return f"REHEARSAL{tag}{number:04d}"


def take(fake, postings, worker: str):
    """The worker accepts a HIT with a free assignment: (assignment id, entry query, provider cookies)."""
    hit = next((p.external_id for p in postings if fake.hits[p.external_id]["NumberOfAssignmentsAvailable"] > 0), None)
    if hit is None:
        raise RuntimeError("no assignment left at the provider")
    assignment = fake.accept(hit, worker)
    return assignment, {"assignmentId": assignment, "hitId": hit, "workerId": worker, "turkSubmitTo": fake.url}, {}
