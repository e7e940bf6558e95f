"""CGoDial hard-test scoring: workers score items 1-5 on given criteria.

PROTOCOLS.md section 6. Items whose mean score (over every worker and criterion) is above the
job's threshold, 2.5 by default, form the hard test subset (`selectors.quality.hard_subset`).
Build the job from the turns that at least one baseline gets wrong (choose them with a dialog
selection when creating the job).
"""
from collections.abc import Mapping

from .base import Problem, TaskType, TaskTypeSettingsError, register

SCALE = (1, 2, 3, 4, 5)
DEFAULT_CRITERIA = ["Hard to understand", "Spoken features on keywords"]
DEFAULT_THRESHOLD = 2.5
MAX_CRITERIA = 10


def field_name(index: int) -> str:
    return f"criterion_{index + 1}"


class HardScoreTaskType(TaskType):
    key = "hard_score"
    source_speaker = "user"
    label = "Score how hard items are (CGoDial hard test subset)"
    template = "annotation/tasks/hard_score.html"
    agreement_level = "ordinal"
    supports_voting = False  # ratings are checked by agreement and flags, not by votes
    settings_help = {
        "criteria": (
            list(DEFAULT_CRITERIA),
            "What workers score from 1 (not at all) to 5 (very much), one score per criterion.",
        ),
        "hard_threshold": (
            DEFAULT_THRESHOLD,
            "Items whose mean score is above this form the hard subset (CGoDial: 2.5).",
        ),
    }

    def clean_settings(self, settings):
        cleaned = super().clean_settings(settings)
        errors = {}
        criteria = cleaned["criteria"]
        if (
            not isinstance(criteria, list)
            or not criteria
            or len(criteria) > MAX_CRITERIA
            or any(not isinstance(c, str) or not c.strip() for c in criteria)
        ):
            errors["criteria"] = f"give 1 to {MAX_CRITERIA} criteria, each a non-empty text"
        elif len({c.strip().casefold() for c in criteria}) != len(criteria):
            errors["criteria"] = "a criterion is listed twice"
        threshold = cleaned["hard_threshold"]
        if not isinstance(threshold, (int, float)) or isinstance(threshold, bool) or not SCALE[0] <= threshold < SCALE[-1]:
            errors["hard_threshold"] = f"a number from {SCALE[0]} up to (not including) {SCALE[-1]}"
        if errors:
            raise TaskTypeSettingsError(errors)
        cleaned["criteria"] = [c.strip() for c in criteria]
        return cleaned

    def build_payload(self, turn) -> dict:
        return {"utterance": turn.text, "slot_values": [sv["value"] for sv in turn.slot_values]}

    def answer_fields(self, settings):
        return [
            {"name": field_name(i), "label": criterion, "help": "1 = not at all, 5 = very much.", "choices": SCALE}
            for i, criterion in enumerate(settings.get("criteria", DEFAULT_CRITERIA))
        ]

    def validate(self, payload: Mapping, settings: Mapping, answers: Mapping) -> tuple[dict, list[Problem]]:
        cleaned, problems = {}, []
        for f in self.answer_fields(settings):
            raw = answers.get(f["name"], "")
            try:
                score = int(str(raw).strip())
            except ValueError:
                score = None
            if score not in SCALE or isinstance(raw, bool) or (isinstance(raw, float) and not raw.is_integer()):
                problems.append(Problem(f["name"], "required", f"{f['label']}: choose a score from 1 to 5."))
                continue
            cleaned[f["name"]] = score
        return cleaned, problems

    def grade_gold(self, gold: Mapping, answers: Mapping) -> bool:
        """A gold score is met within one point: scores are judgements, not facts."""
        return all(abs(int(answers.get(k, 0)) - int(v)) <= 1 for k, v in gold.items())


def item_mean(answer_rows: list[Mapping]) -> float | None:
    """Mean of every score in the responses of one item; None without scores. Pure."""
    scores = [v for answers in answer_rows for v in answers.values() if isinstance(v, int)]
    return sum(scores) / len(scores) if scores else None


register(HardScoreTaskType())
