"""Fixtures for the hits tests: jobs with slots, the fake providers, and a task-token stand-in."""
import sys
import types
from decimal import Decimal

import pytest
from django.core import signing

from hits.fakes import FakeMTurk, FakeProlific

ANSWERS = {"paraphrase": "please find me a cheap hotel located in the centre"}
UTTERANCE = "i need a cheap hotel in the centre"


@pytest.fixture
def work_tokens(monkeypatch):
    """annotation.work_tokens, or a stand-in with the agreed interface while it is being written."""
    try:
        import annotation.work_tokens as module  # noqa: F401

        return module
    except ImportError:
        module = types.ModuleType("annotation.work_tokens")
        module.make_token = lambda slot: signing.dumps([slot.pk, slot.worker_id], salt="test.work")
        module.read_token = lambda token: tuple(signing.loads(token, salt="test.work"))
        monkeypatch.setitem(sys.modules, "annotation.work_tokens", module)
        return module


def make_job(*, turns=3, redundancy=1, reward="0.50", name="hits job"):
    from annotation.models import Corpus, Dialog, Turn
    from annotation.services.jobs import create_job

    corpus = Corpus.objects.create(name=f"{name} corpus", source_format="jsonl")
    dialog = Dialog.objects.create(corpus=corpus, external_id="d1", position=0)
    Turn.objects.bulk_create(
        [
            Turn(dialog=dialog, index=i, speaker="user", text=UTTERANCE,
                 slot_values=[{"slot": "price", "value": "cheap"}, {"slot": "area", "value": "centre"}])
            for i in range(turns)
        ]
    )
    return create_job(
        corpus=corpus, name=name, settings={"variants": ["paraphrase"]}, redundancy=redundancy, reward=Decimal(reward),
        instructions="Rewrite the user's turn.",
    )


@pytest.fixture
def job_factory(db):
    return make_job


@pytest.fixture
def aws_env(monkeypatch):
    # boto3's credential chain reads these; the fake ignores the signature.
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAFAKEFAKEFAKE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "fake-secret")
    monkeypatch.delenv("AWS_PROFILE", raising=False)


@pytest.fixture
def fake_mturk(settings, aws_env):
    from hits import providers
    from hits.providers.mturk import MTurkProvider

    with FakeMTurk() as fake:
        settings.QUORUM_MTURK_ENDPOINT_URL = fake.url
        settings.QUORUM_MTURK_SUBMIT_HOSTS = ["https://workersandbox.mturk.com", "https://www.mturk.com"]
        settings.QUORUM_MTURK_MAX_ATTEMPTS = 3
        provider = MTurkProvider(rate=1000, sleep=lambda s: None)
        with providers.override("mturk", provider):
            fake.provider = provider
            yield fake


@pytest.fixture
def fake_prolific(settings, monkeypatch):
    from hits import providers
    from hits.providers.prolific import ProlificProvider

    with FakeProlific(token="secret-prolific-token") as fake:
        settings.QUORUM_PROLIFIC_API_URL = fake.url
        monkeypatch.setenv("PROLIFIC_TOKEN", "secret-prolific-token")
        with providers.override("prolific", ProlificProvider()):
            yield fake


@pytest.fixture(autouse=True)
def _hits_urls(settings):
    settings.ROOT_URLCONF = "tests.hits.urls"
    settings.QUORUM_PUBLIC_BASE_URL = "https://quorum.example.org"


@pytest.fixture
def project_urls(settings):
    """The project's URLs, where the organizer pages live (the hits tests' own URLs have the API and entries)."""
    settings.ROOT_URLCONF = "quorum.urls"
