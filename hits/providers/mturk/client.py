"""The boto3 `mturk` client, from settings, checked once.

Credentials come from boto3's standard chain (never read or stored here); the sandbox endpoint is
used unless QUORUM_MTURK_LIVE=true and the job asks for live work, or QUORUM_MTURK_ENDPOINT_URL
names an MTurk-compatible endpoint (and the tests' fake).
"""
import threading

from django.conf import settings

SANDBOX_ENDPOINT = "https://mturk-requester-sandbox.us-east-1.amazonaws.com"
LIVE_ENDPOINT = "https://mturk-requester.us-east-1.amazonaws.com"


def is_live() -> bool:
    return bool(getattr(settings, "QUORUM_MTURK_LIVE", False))


def endpoint_for(sandbox: bool) -> str:
    custom = getattr(settings, "QUORUM_MTURK_ENDPOINT_URL", "")
    if custom:
        return custom
    return LIVE_ENDPOINT if (is_live() and not sandbox) else SANDBOX_ENDPOINT


_loader_lock = threading.Lock()
_data_loader = None


def new_session(**credentials):
    """A boto3 session whose botocore data loader is the process's one: the service model, endpoints
    and partitions are JSON files that every new session otherwise reads and parses again, most of
    what building a client costs (docs/measurements.md). Credentials are still resolved per session,
    from boto3's standard chain unless given."""
    import boto3
    import botocore.loaders
    import botocore.session

    global _data_loader
    core = botocore.session.get_session()
    with _loader_lock:
        if _data_loader is None:
            _data_loader = botocore.loaders.create_loader()
        core.register_component("data_loader", _data_loader)
        session = boto3.session.Session(botocore_session=core, **credentials)
        # boto3 appends its own data folder to the loader's paths at every session; once is enough.
        paths = _data_loader.search_paths
        if paths.count(paths[-1]) > 1:
            paths.pop()
    return session


def build_client(sandbox: bool = True):
    # boto3 is imported here, when a client is built, not with the module: web workers whose pages
    # never call MTurk do not carry it.
    from botocore.config import Config

    config = Config(
        retries={"mode": "standard", "total_max_attempts": int(getattr(settings, "QUORUM_MTURK_MAX_ATTEMPTS", 5))},
        max_pool_connections=int(getattr(settings, "QUORUM_MTURK_CONCURRENCY", 8)) + 2,
        connect_timeout=10,
        read_timeout=30,
    )
    return new_session().client("mturk", region_name="us-east-1", endpoint_url=endpoint_for(sandbox), config=config)
