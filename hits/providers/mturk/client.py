"""The boto3 `mturk` client, from settings, checked once.

Credentials come from boto3's standard chain (never read or stored here); the sandbox endpoint is
used unless QUORUM_MTURK_LIVE=true and the job asks for live work, or QUORUM_MTURK_ENDPOINT_URL
names an MTurk-compatible endpoint (and the tests' fake).
"""
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


def build_client(sandbox: bool = True):
    # boto3 is imported here, when a client is built, not with the module: web workers whose pages
    # never call MTurk do not carry it.
    import boto3
    from botocore.config import Config

    config = Config(
        retries={"mode": "standard", "total_max_attempts": int(getattr(settings, "QUORUM_MTURK_MAX_ATTEMPTS", 5))},
        max_pool_connections=int(getattr(settings, "QUORUM_MTURK_CONCURRENCY", 8)) + 2,
        connect_timeout=10,
        read_timeout=30,
    )
    return boto3.session.Session().client(
        "mturk", region_name="us-east-1", endpoint_url=endpoint_for(sandbox), config=config
    )
