"""The interface every task type implements, and the registry."""
from collections.abc import Iterable, Mapping
from typing import Any

from ..rewrite_checks import Problem  # noqa: F401  (re-exported: one Problem type for every task type)

_registry: dict[str, "TaskType"] = {}


class TaskTypeSettingsError(ValueError):
    """A job's settings do not fit its task type; `errors` maps setting name to message."""

    def __init__(self, errors: Mapping[str, str]):
        self.errors = dict(errors)
        super().__init__("; ".join(f"{k}: {v}" for k, v in self.errors.items()))


class TaskType:
    key: str = ""
    label: str = ""
    template: str = ""
    #: Krippendorff level of measurement for agreement on this type's answers.
    agreement_level: str = "nominal"
    #: Setting name -> (default, help text). The help text is shown wherever the setting is.
    settings_help: Mapping[str, tuple[Any, str]] = {}
    #: Whether this type's responses can be put to a vote (CGoDial voting; see services.voting).
    #: True for content-producing types; the vote type itself and pure rating types say False.
    supports_voting: bool = True

    def default_settings(self) -> dict:
        return {name: default for name, (default, _help) in self.settings_help.items()}

    def clean_settings(self, settings: Mapping | None) -> dict:
        """Fill defaults and validate; raise TaskTypeSettingsError with a message per bad setting."""
        settings = dict(settings or {})
        unknown = sorted(set(settings) - set(self.settings_help))
        if unknown:
            raise TaskTypeSettingsError({name: "unknown setting for this task type" for name in unknown})
        return {**self.default_settings(), **settings}

    #: Only turns of this speaker become items ("user" for rewrites); None: every turn. Applied in
    #: the database query, so a job over a large corpus does not read the turns it would drop.
    source_speaker: str | None = None

    def source_turns(self, turns: Iterable) -> Iterable:
        """The source turns that become items, from turns already limited to `source_speaker`."""
        return list(turns)

    def build_payload(self, turn) -> dict:
        """What an annotator needs to see for one item, beyond the dialog history."""
        raise NotImplementedError

    def answer_fields(self, settings: Mapping) -> list[dict]:
        """The fields of the response form: [{"name", "label", "help"}]."""
        raise NotImplementedError

    def validate(self, payload: Mapping, settings: Mapping, answers: Mapping) -> tuple[dict, list[Problem]]:
        """Clean a response; return (cleaned answers, problems). No problems means it is accepted."""
        raise NotImplementedError

    # --- Work order -----------------------------------------------------------------------------

    def claim_start(self, job, worker) -> int | None:
        """Where in the job's position order this worker's claims begin, or None for the plain order.

        Called by claim_next_slot inside its transaction. An offset makes the worker meet the items
        as a rotation of the position order: positions >= offset first, then the ones before it.
        Each branch is still an ordered scan of the (job, state, position) index.
        """
        return None

    # --- Quality-control hooks (issue 5). Defaults suit any type. ---------------------------------

    def review_payload(self, payload: Mapping, answers: Mapping, settings: Mapping) -> dict:
        """What a voter sees of one response: {"utterance", "slot_values", "shown": [{"label", "text"}]}.

        Only types with `supports_voting` are asked. The default shows every answer field under its label.
        """
        shown = [
            {"name": f["name"], "label": f["label"], "text": str(answers.get(f["name"], ""))}
            for f in self.answer_fields(settings)
            if answers.get(f["name"]) not in (None, "")
        ]
        return {
            "utterance": payload.get("utterance", ""),
            "slot_values": list(payload.get("slot_values", [])),
            "shown": shown,
        }

    def grade_gold(self, gold: Mapping, answers: Mapping) -> bool:
        """Whether cleaned answers match a gold item's known answer: every key of `gold` equal."""
        return all(answers.get(key) == value for key, value in gold.items())

    def rating_values(self, answers: Mapping) -> dict:
        """The ratings in a response, {key: number}, for the rating flags and agreement. Default: the
        whole-number answers."""
        return {k: v for k, v in answers.items() if isinstance(v, int) and not isinstance(v, bool)}

    def text_of(self, answers: Mapping) -> str:
        """The free text of a response, for near-duplicate flags. Default: the text answers joined."""
        return "\n".join(v for v in answers.values() if isinstance(v, str) and v)


def register(task_type: TaskType) -> TaskType:
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
