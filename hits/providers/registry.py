"""The provider registry: every package under hits/providers/ with a `provider.py` is a provider.

A package's `provider.py` defines one subclass of `CrowdProvider` (its `PROVIDER` name); the
registry imports each package once, keys them by `CrowdProvider.key`, and builds one instance per
key on first use. Nothing else lists the providers, so a new crowd is a new package.

Tests replace an instance with `override(key, provider)` (a context manager) to point a provider
at a fake or a stubbed client.
"""
import importlib
import pkgutil
import threading
from contextlib import contextmanager
from pathlib import Path

from .. import requirements as requirements_rules
from .base import CrowdProvider

_PACKAGE = __name__.rsplit(".", 1)[0]
_classes: dict[str, type[CrowdProvider]] = {}
_instances: dict[str, CrowdProvider] = {}
_lock = threading.RLock()


def classes() -> dict[str, type[CrowdProvider]]:
    """Every provider class by key, in package order; discovered once."""
    with _lock:
        if not _classes:
            for module in pkgutil.iter_modules([str(Path(__file__).parent)]):
                if not module.ispkg:
                    continue
                cls = importlib.import_module(f"{_PACKAGE}.{module.name}.provider").PROVIDER
                _classes[cls.key] = cls
        return _classes


def package_module(key: str, name: str):
    """A module of provider `key`'s package (e.g. its `rehearsal`), imported on demand."""
    return importlib.import_module(f"{classes()[key].__module__.rsplit('.', 1)[0]}.{name}")


def keys() -> tuple[str, ...]:
    return tuple(classes())


def get(key: str) -> CrowdProvider:
    with _lock:
        if key not in _instances:
            try:
                cls = classes()[key]
            except KeyError:
                raise KeyError(f"unknown provider {key!r}; choose one of {', '.join(keys())}") from None
            _instances[key] = cls()
        return _instances[key]


def default_key() -> str:
    return next(key for key, cls in classes().items() if cls.default)


def paid_keys() -> tuple[str, ...]:
    return tuple(key for key, cls in classes().items() if cls.paid)


def rehearsable_keys() -> tuple[str, ...]:
    return tuple(key for key, cls in classes().items() if cls.rehearsable)


def all_frame_origins() -> tuple[str, ...]:
    return tuple(dict.fromkeys(origin for cls in classes().values() for origin in cls.frame_origins))


def clean_requirements(key: str, requirements: dict | None) -> dict:
    """A job's requirements validated for provider `key`, its defaults filled in; RequirementsError says
    what to fix. Keys of the other providers are kept (a job may be rehearsed or moved) but not checked."""
    cls = classes()[key]
    known = set(requirements_rules.COMMON_KEYS).union(*(c.requirement_keys for c in classes().values()))
    return requirements_rules.clean(
        requirements, known_keys=known, defaults=cls.requirement_defaults, check=get(key).check_requirements
    )


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
