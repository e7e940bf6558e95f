"""The registry of task types: each type's module calls `register`; nobody keeps a list.

`register` checks what the core and the capabilities need of a type (a key the job column and the
pages can hold, its template, default settings its own `clean_settings` takes, one item source, a level
of measurement, a store for its files), so a new module that lacks one fails when it is imported, with
what to fix; `types_with` finds the types that declare a capability.
"""
import re
import sys
from pathlib import Path
from typing import TypeVar

from .base import LEVELS, TaskType, TaskTypeSettingsError, default_settings
from .capabilities import ITEM_SOURCES, TakesUploads, capability

C = TypeVar("C")

_registry: dict[str, TaskType] = {}


#: The longest key `Job.task_type` holds (`tests/annotation/task_types/test_registration.py` holds them equal).
MAX_KEY_LENGTH = 32
#: Lower-case words joined by single underscores: a key is part of form field names
#: (`setting__<key>__<setting>`, split on the double underscore) and of `data-shown-when="task_type=a,b"`.
KEY_PATTERN = re.compile(r"[a-z][a-z0-9]*(_[a-z0-9]+)*")


def _key_problems(key: str) -> list[str]:
    if not key:
        return ["no key"]
    problems = []
    if len(key) > MAX_KEY_LENGTH:
        problems.append(f"the key is {len(key)} characters; Job.task_type holds at most {MAX_KEY_LENGTH}")
    if not KEY_PATTERN.fullmatch(key):
        problems.append("the key must be lower-case letters and digits in words joined by single underscores "
                        "(it is part of form field names and of the new-job page's data-shown-when)")
    return problems


def template_found(task_type: TaskType) -> bool:
    """Whether the type's template exists: asked of Django's template loaders once the apps are ready;
    before that (a module imported early) looked for under the `templates` folder of the app that
    holds the type's module."""
    from django.apps import apps
    from django.template import TemplateDoesNotExist, loader

    if apps.ready:
        try:
            loader.get_template(task_type.template)
        except TemplateDoesNotExist:
            return False
        return True
    module = sys.modules.get(type(task_type).__module__)
    here = Path(getattr(module, "__file__", "") or ".").resolve().parent
    return any((folder / "templates" / task_type.template).is_file() for folder in [here, *here.parents][:4])


def _settings_problems(task_type: TaskType) -> list[str]:
    try:
        task_type.clean_settings(default_settings(task_type))
    except TaskTypeSettingsError as refused:
        return [f"its clean_settings refuses its own default settings: {refused.errors}"]
    return []


def problems_of(task_type: TaskType) -> list[str]:
    """What keeps `task_type` from being registered; empty when nothing does."""
    problems = _key_problems(task_type.key)
    if not task_type.template:
        problems.append("no template: name the work page's template (e.g. 'annotation/tasks/<key>.html')")
    elif not template_found(task_type):
        problems.append(f"its template {task_type.template!r} is not found (it sits in its app's templates folder)")
    problems += _settings_problems(task_type)
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
