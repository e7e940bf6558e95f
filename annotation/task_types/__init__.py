"""The task-type registry: one module per kind of work (see DESIGN.md, "Task types").

Every module of this package is imported here and registers its types, so a new kind of work is
one new module (plus its template) and nothing else: nobody keeps a list of them.
"""
import importlib
import pkgutil

from .base import (  # noqa: F401
    CORPUS,
    PAYLOADS,
    RESPONSES,
    PayloadError,
    Problem,
    TaskType,
    TaskTypeSettingsError,
    Upload,
    get,
    register,
    registry,
)

for _module in pkgutil.iter_modules(__path__):
    if _module.name != "base" and not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")
