"""Prolific for `manage.py rehearse`: the local fake (with a fresh token), a provider pointed at it, and
how a simulated participant starts a submission there before arriving at Quorum's entry URL."""
import secrets

from ...fakes import FakeProlific
from ...fakes.workers import prolific_cookie
from .provider import ProlificProvider

#: Options a rehearsal copy has whatever the job's (hits.services.rehearsal): none.
FORCED_OPTIONS: dict = {}


def world(seed: int):
    """(fake server, provider instance pointed at it, settings for the run given the started fake)."""
    token = secrets.token_hex(16)
    fake = FakeProlific(token=token, seed=seed)
    instance = ProlificProvider(api_url=fake.url, token=token, timeout=30)
    return fake, instance, lambda f: {
        "QUORUM_PROLIFIC_API_URL": f.url,
        "QUORUM_PROLIFIC_COMPLETE_URL": f.url + "/submissions/complete?cc={code}",
    }


def worker_id(tag: str, number: int) -> str:
    return f"rehearsal{tag.lower()}{number:04d}"


def take(fake, postings, worker: str):
    """The participant starts the study: (submission id, entry query, Prolific's session cookie)."""
    if not postings:
        raise RuntimeError("no study was published")
    study = postings[0].external_id
    session = fake.start_submission(study, worker)
    return session, {"PROLIFIC_PID": worker, "STUDY_ID": study, "SESSION_ID": session}, prolific_cookie(session)
