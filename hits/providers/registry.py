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
from collections.abc import Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from ..policy import requirements as requirements_rules
from .base import CrowdProvider
from .options import (
    Option,
    OptionsError,
    requirement_defaults,
    requirement_names,
)
from .options import (
    check_requirements as check_option_requirements,
)
from .options import (
    cleaned as cleaned_options,
)

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
            _refuse_option_clashes(_classes)
        return _classes


def _refuse_option_clashes(found: dict[str, type[CrowdProvider]]) -> None:
    """An option's name says whose it is, so no two providers may declare the same one."""
    owners: dict[str, str] = {}
    for key, cls in found.items():
        for option in cls.options:
            if option.name in owners or option.name in requirements_rules.COMMON_KEYS:
                found.clear()
                raise ImproperlyConfigured(
                    f"provider {key} declares option {option.name!r}, which {owners.get(option.name, 'every provider')} has"
                )
            owners[option.name] = key


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


def choices() -> list[tuple[str, str]]:
    """(key, label) of every provider: the choices of every `provider` column and form field."""
    return [(key, cls.label or key) for key, cls in classes().items()]


def label(key: str) -> str:
    """What the builder reads for provider `key` (the key itself for one no longer installed)."""
    cls = classes().get(key)
    return (cls.label or key) if cls else key


def default_key() -> str:
    return next(key for key, cls in classes().items() if cls.default)


def paid_keys() -> tuple[str, ...]:
    return tuple(key for key, cls in classes().items() if cls.paid)


def rehearsable_keys() -> tuple[str, ...]:
    return tuple(key for key, cls in classes().items() if cls.rehearsable)


def all_frame_origins() -> tuple[str, ...]:
    return tuple(dict.fromkeys(origin for cls in classes().values() for origin in cls.frame_origins))


def all_options() -> dict[str, Option]:
    """Every provider's options by name (names are unique across providers)."""
    return {option.name: option for cls in classes().values() for option in cls.options}


def setting_names() -> frozenset[str]:
    """The names of the options kept in `JobCrowdConfig.provider_options` (not requirements)."""
    return frozenset(name for name, option in all_options().items() if not option.requirement)


def clean_requirements(key: str, requirements: dict | None) -> dict:
    """A job's requirements validated for provider `key`, its defaults filled in; RequirementsError says
    what to fix. Keys of the other providers are kept (a job may be rehearsed or moved) but not checked."""
    cls = classes()[key]
    provider = get(key)
    known = set(requirements_rules.COMMON_KEYS).union(*(requirement_names(c.options) for c in classes().values()))

    def check(req: dict, errors: dict) -> None:
        check_option_requirements(cls.options, req, errors)
        provider.check_requirements(req, errors)

    return requirements_rules.clean(
        requirements, known_keys=known, defaults=requirement_defaults(cls.options), check=check
    )


def clean_settings(values: Mapping[str, Any], current: Mapping[str, Any] | None) -> dict[str, Any]:
    """A job's `provider_options`: `current` with `values` (settings of any provider, by name) checked
    against their provider's schema and written over it, and every provider's missing defaults filled
    in. OptionsError names each value to fix."""
    out, errors = dict(current or {}), {}
    for cls in classes().values():
        try:
            out = cleaned_options(cls.options, values, out)
        except OptionsError as exc:
            errors.update(exc.errors)
    if errors:
        raise OptionsError(errors)
    return out


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
