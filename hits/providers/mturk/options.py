"""MTurk's job options (see hits/providers/options.py): who may take a HIT, and sandbox or live.

The requirements become the HIT type's QualificationRequirements (requirements.py); their defaults
are RADDLE's: Locale = US and PercentAssignmentsApproved >= 90.
"""
import re

from ...policy.requirements import QUALIFICATION_ID
from ..options import Kind, Option

_COUNTRY = re.compile(r"^[A-Z]{2}$")


def _countries(codes: list) -> str | None:
    return None if all(_COUNTRY.match(c) for c in codes) else "a list of two-letter country codes such as US"


def _qualification_id(value: str) -> str | None:
    return None if QUALIFICATION_ID.match(value) else "a qualification type id of capital letters and digits"


def _raddle_locales() -> list[str]:
    return ["US"]  # a new list each time: a job's requirements are its own


OPTIONS = (
    Option(
        "locales", Kind.CODES, "MTurk: countries the worker must be in, two-letter codes (RADDLE: US).",
        default=_raddle_locales, check=_countries, requirement=True,
    ),
    Option(
        "min_approval_rate", Kind.WHOLE,
        "MTurk: the worker's lowest percentage of approved assignments (RADDLE: 90). Empty: RADDLE's 90.",
        default=90, minimum=0, maximum=100, requirement=True,
    ),
    Option(
        "min_hits_approved", Kind.WHOLE, "MTurk: the fewest approved HITs a worker must have. Empty: no limit.",
        minimum=0, maximum=10**9, requirement=True,
    ),
    Option(
        "qualifications", Kind.JSON,
        'MTurk: custom qualifications, [{"id": "3ABC...", "comparator": "GreaterThanOrEqualTo", "values": [80]}].',
        requirement=True, on_form=False,
    ),
    Option(
        "allow_qualification_id", Kind.TEXT, "MTurk: the qualification granted to the allow list (workers must have it).",
        check=_qualification_id, requirement=True, on_form=False,
    ),
    Option(
        "block_qualification_id", Kind.TEXT,
        "MTurk: the qualification soft-blocked workers get; the HIT requires that a worker does not have it.",
        check=_qualification_id, requirement=True, on_form=False,
    ),
    Option(
        "sandbox", Kind.SWITCH, "MTurk: post to the sandbox (no money moves). Live posting also needs QUORUM_MTURK_LIVE=true.",
        default=True, on_form=False,
    ),
)
