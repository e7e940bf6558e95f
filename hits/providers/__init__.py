"""The provider registry: one instance per provider key, built on first use.

Tests replace an instance with `override(key, provider)` (a context manager) to point a provider
at a fake or a stubbed client.
"""
import threading
from contextlib import contextmanager

from .base import (  # noqa: F401
    Completion,
    CrowdProvider,
    Entry,
    EntryError,
    ProviderError,
    RemoteAssignment,
    TransientProviderError,
)

_instances: dict[str, CrowdProvider] = {}
_lock = threading.Lock()


def _build(key: str) -> CrowdProvider:
    if key == "inhouse":
        from .inhouse import InHouseProvider

        return InHouseProvider()
    if key == "mturk":
        from .mturk import MTurkProvider

        return MTurkProvider()
    if key == "prolific":
        from .prolific import ProlificProvider

        return ProlificProvider()
    raise KeyError(f"unknown provider {key!r}; choose inhouse, prolific or mturk")


def get(key: str) -> CrowdProvider:
    with _lock:
        if key not in _instances:
            _instances[key] = _build(key)
        return _instances[key]


def all_frame_origins() -> tuple[str, ...]:
    from .mturk import WORKER_ORIGINS
    from .prolific import ProlificProvider

    return tuple(dict.fromkeys(WORKER_ORIGINS + ProlificProvider.frame_origins))


@contextmanager
def override(key: str, provider: CrowdProvider):
    with _lock:
        previous = _instances.get(key)
        _instances[key] = provider
    try:
        yield provider
    finally:
        with _lock:
            if previous is None:
                _instances.pop(key, None)
            else:
                _instances[key] = previous


def reset() -> None:
    with _lock:
        _instances.clear()
