"""Settings for the HTTP benchmark: Quorum's own, plus the baseline view's URL."""
from quorum.settings import *  # noqa: F401,F403

ROOT_URLCONF = "perf.urls"
DEBUG = False
