"""Amazon Mechanical Turk (and MTurk-compatible endpoints): client.py makes the boto3 client,
provider.py the calls, fees.py the commission, requirements.py the qualification requirements,
entry.py the ExternalQuestion's parameters, posting.py the HIT split and HIT type, rehearsal.py the
local fake for `manage.py rehearse`."""
from .client import LIVE_ENDPOINT, SANDBOX_ENDPOINT, build_client, endpoint_for, is_live  # noqa: F401
from .provider import MTurkProvider  # noqa: F401
