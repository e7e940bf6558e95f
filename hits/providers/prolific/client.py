"""Prolific's HTTP API (QUORUM_PROLIFIC_API_URL), with the token from the environment variable named
by QUORUM_PROLIFIC_TOKEN_ENV (PROLIFIC_TOKEN). Throttling, 5xx and network failures are transient.

Live spending needs an explicit setting, as MTurk's does: an API anywhere but on this machine (the local
fakes of the tests and `rehearse` are) publishes studies, approves submissions and pays bonuses only with
QUORUM_PROLIFIC_LIVE=true; a token alone does not spend (`spending_refusal`)."""
import ipaddress
import os
from urllib.parse import urlparse

import requests
from django.conf import settings

from ..base import ProviderError, TransientProviderError

DEFAULT_API_URL = "https://api.prolific.com"


def _on_this_machine(api_url: str) -> bool:
    host = (urlparse(api_url).hostname or "").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name other than localhost may be anywhere


def spending_refusal(api_url: str) -> str | None:
    """Why a call that spends (publishing a study, approving, a bonus) may not be made at `api_url`, or None."""
    if getattr(settings, "QUORUM_PROLIFIC_LIVE", False) or _on_this_machine(api_url):
        return None
    return (
        f"Prolific at {api_url} spends real money, and QUORUM_PROLIFIC_LIVE is not true. Set QUORUM_PROLIFIC_LIVE=true "
        "to publish studies, approve submissions and pay bonuses there, or point QUORUM_PROLIFIC_API_URL at a local "
        "fake (`manage.py rehearse` runs one)"
    )


class ProlificAPI:
    def __init__(self, api_url=None, token=None, session=None, timeout=30):
        self.api_url = (api_url or getattr(settings, "QUORUM_PROLIFIC_API_URL", DEFAULT_API_URL)).rstrip("/")
        self._token = token
        self._session = session or requests.Session()
        self.timeout = timeout

    def _headers(self) -> dict:
        token = self._token or os.environ.get(getattr(settings, "QUORUM_PROLIFIC_TOKEN_ENV", "PROLIFIC_TOKEN"), "")
        if not token:
            raise ProviderError("set the PROLIFIC_TOKEN environment variable to use Prolific")
        return {"Authorization": f"Token {token}"}

    def send(self, method: str, path: str, **kwargs) -> requests.Response:
        """The raw response of a call that succeeded (for its headers); ProviderError otherwise."""
        try:
            response = self._session.request(
                method, self.api_url + path, headers=self._headers(), timeout=self.timeout, **kwargs
            )
        except requests.RequestException as exc:
            raise TransientProviderError(f"Prolific {method} {path}: {type(exc).__name__}") from None
        if response.status_code == 429 or response.status_code >= 500:
            raise TransientProviderError(f"Prolific {method} {path}: HTTP {response.status_code}")
        if response.status_code >= 400:
            # The body explains the refusal; it never contains our token.
            raise ProviderError(f"Prolific {method} {path}: HTTP {response.status_code} {response.text[:300]}")
        return response

    def request(self, method: str, path: str, **kwargs):
        response = self.send(method, path, **kwargs)
        return response.json() if response.content else {}
