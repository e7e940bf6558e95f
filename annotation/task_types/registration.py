"""The registry of task types: each type's module calls `register`; nobody keeps a list.

`register` checks what the core and the capabilities need of a type (a key, one item source, a
level of measurement, a store for its files); `types_with` finds the types that declare a capability.
"""
from typing import TypeVar

from .base import LEVELS, TaskType, default_settings
from .capabilities import ITEM_SOURCES, TakesUploads, capability

C = TypeVar("C")

_registry: dict[str, TaskType] = {}


def problems_of(task_type: TaskType) -> list[str]:
    """What keeps `task_type` from being registered; empty when nothing does."""
    problems = []
    if not task_type.key:
        problems.append("no key")
    sources = [cls.__name__ for cls in ITEM_SOURCES if isinstance(task_type, cls)]
    if len(sources) != 1:
        problems.append(f"declare exactly one item source of {', '.join(cls.__name__ for cls in ITEM_SOURCES)} (declares {sources or 'none'})")
    if task_type.agreement_level not in LEVELS:
        problems.append(f"agreement_level must be one of {', '.join(LEVELS)}")
    uploads = capability(task_type, TakesUploads)
    has_upload_fields = any(f.get("upload") for f in task_type.answer_fields(default_settings(task_type)))
    if has_upload_fields and (uploads is None or not uploads.upload_store):
        problems.append("a type with upload fields must declare TakesUploads and name its upload_store")
    return problems


def register(task_type: TaskType) -> TaskType:
    problems = problems_of(task_type)
    if problems:
        raise ValueError(f"task type {task_type.key!r}: {'; '.join(problems)}")
    if task_type.key in _registry:
        raise ValueError(f"task type {task_type.key!r} is registered twice")
    _registry[task_type.key] = task_type
    return task_type


def get(key: str) -> TaskType:
    try:
        return _registry[key]
    except KeyError:
        raise KeyError(f"unknown task type {key!r}; known: {', '.join(sorted(_registry))}") from None


def registry() -> dict[str, TaskType]:
    return dict(_registry)


def types_with(cls: type[C]) -> list[C]:
    """Every registered type that declares capability `cls`, by key."""
    return [kind for _key, kind in sorted(_registry.items()) if isinstance(kind, cls)]


def keys_with(cls: type) -> list[str]:
    """The keys of the registered types that declare capability `cls`."""
    return [kind.key for _key, kind in sorted(_registry.items()) if isinstance(kind, cls)]
