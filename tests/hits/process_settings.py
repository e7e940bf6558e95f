"""Settings for Quorum processes started by the hits crash tests and the MTurk benchmark: the
project's settings plus the hits settings read from the environment (as quorum/settings.py will
once the lead adds them; see the hits report)."""
import os

from quorum.settings import *  # noqa: F401,F403

QUORUM_MTURK_ENDPOINT_URL = os.environ.get("QUORUM_MTURK_ENDPOINT_URL", "")
QUORUM_MTURK_CALLS_PER_SECOND = float(os.environ.get("QUORUM_MTURK_CALLS_PER_SECOND", "20"))
QUORUM_MTURK_CONCURRENCY = int(os.environ.get("QUORUM_MTURK_CONCURRENCY", "8"))
QUORUM_MTURK_MAX_ATTEMPTS = int(os.environ.get("QUORUM_MTURK_MAX_ATTEMPTS", "5"))
QUORUM_PROLIFIC_API_URL = os.environ.get("QUORUM_PROLIFIC_API_URL", "https://api.prolific.com")
QUORUM_PUBLIC_BASE_URL = os.environ.get("QUORUM_PUBLIC_BASE_URL", "https://quorum.example.org")
ROOT_URLCONF = os.environ.get("QUORUM_TEST_URLCONF", "tests.hits.urls")  # until quorum/urls.py includes hits.urls
