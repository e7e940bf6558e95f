"""The task-type registry: one module per kind of work (see DESIGN.md, "Task types").

A new kind of work (Likert rating, vote, hard-test scoring) is one new module that subclasses
`TaskType` and calls `register`; views, services and exports look the type up by `job.task_type`
instead of switching on it.
"""
from .base import Problem, TaskType, TaskTypeSettingsError, get, register, registry  # noqa: F401
from . import hard_score, rewrite, vote  # noqa: F401,E402  (each registers itself)
from . import likert  # noqa: F401,E402
