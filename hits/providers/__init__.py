"""Crowd providers: the interface (base.py), the registry (registry.py), and one package per provider.

Callers use `providers.get(key)` and the registry's helpers (`keys()`, `choices()`, `label(key)`, which
every `provider` column and form field read); only the provider packages themselves spell a provider's name.
"""
from .base import (  # noqa: F401
    Completion,
    Confirmation,
    CrowdProvider,
    Entry,
    EntryError,
    ProviderError,
    RemoteAssignment,
    TransientProviderError,
)
from .options import Kind, Option, OptionsError  # noqa: F401
from .registry import (  # noqa: F401
    all_frame_origins,
    all_options,
    choices,
    classes,
    clean_requirements,
    clean_settings,
    default_key,
    get,
    keys,
    label,
    override,
    package_module,
    paid_keys,
    rehearsable_keys,
    reset,
    setting_names,
)
