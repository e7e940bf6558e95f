"""The task-type registry: one module per kind of work (see DESIGN.md, "Task types").

Every module of this package is imported here and registers its types, so a new kind of work is
one new module (plus its template, and its own contract test,
`tests/annotation/task_types/test_<key>.py`) and nothing else: nobody keeps a list of them. The core of a
type is `base.TaskType`; what only some types do is a capability (`capabilities.py`).
"""
import importlib
import pkgutil

from .base import (  # noqa: F401
    CHAT_MESSAGES,
    PayloadError,
    Problem,
    TaskType,
    TaskTypeSettingsError,
    Upload,
    default_settings,
    free_text_fields,
    text_of,
)
from .capabilities import (  # noqa: F401
    ComparesSystems,
    DiffsAgainstSubject,
    ExportsFiles,
    ExportSource,
    ExportsTestSets,
    FeedsRatings,
    FromCorpusTurns,
    FromPayloads,
    FromResponses,
    GradesGold,
    GroupsFields,
    HasSubset,
    HoldsBackItems,
    LevelsByQuestion,
    NotesSettings,
    OrdersClaims,
    RelaysChat,
    SettingFiles,
    TakesUploads,
    Votable,
    agreement_level_of,
    builds_from,
    capability,
    grade_gold,
    item_source,
    settings_notes,
)
from .registration import get, keys_with, register, registry, types_with  # noqa: F401

_INFRASTRUCTURE = {"base", "capabilities", "registration"}

for _module in pkgutil.iter_modules(__path__):
    if _module.name not in _INFRASTRUCTURE and not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")
