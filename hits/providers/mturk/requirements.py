"""MTurk's worker requirements: keys, checks and the QualificationRequirements they become. Pure.

Keys (all optional), beside the shared ``locales`` (MTurk Locale) and ``allow_list``:

- ``min_approval_rate``: PercentAssignmentsApproved, 0-100 (RADDLE: 90).
- ``min_hits_approved``: NumberHITsApproved.
- ``qualifications``: custom qualifications,
  ``[{"id": "3ABC...", "comparator": "GreaterThanOrEqualTo", "values": [80]}]``.
- ``allow_qualification_id``: the qualification granted to the allow list (workers must have it).
- ``block_qualification_id``: the qualification soft-blocked workers get; the HIT requires that a
  worker does not have it.

Defaults are RADDLE's: Locale = US and PercentAssignmentsApproved >= 90.
"""
from ...requirements import QUALIFICATION_ID, whole_number

LOCALE_QUALIFICATION = "00000000000000000071"
PERCENT_APPROVED_QUALIFICATION = "000000000000000000L0"
NUMBER_APPROVED_QUALIFICATION = "00000000000000000040"
DEFAULTS = {"locales": ["US"], "min_approval_rate": 90}
KEYS = frozenset({"min_approval_rate", "min_hits_approved", "qualifications", "allow_qualification_id", "block_qualification_id"})
COMPARATORS = (
    "LessThan", "LessThanOrEqualTo", "GreaterThan", "GreaterThanOrEqualTo", "EqualTo", "NotEqualTo",
    "Exists", "DoesNotExist", "In", "NotIn",
)


def check(req: dict, errors: dict) -> None:
    whole_number(req, errors, "min_approval_rate", 0, 100)
    whole_number(req, errors, "min_hits_approved", 0, 10**9)
    quals = req.get("qualifications", [])
    if not isinstance(quals, list):
        errors["qualifications"] = "a list of {id, comparator, values}"
    else:
        for i, q in enumerate(quals):
            if not isinstance(q, dict) or not QUALIFICATION_ID.match(str(q.get("id", ""))):
                errors[f"qualifications[{i}]"] = "needs an id of capital letters and digits"
            elif q.get("comparator") not in COMPARATORS:
                errors[f"qualifications[{i}]"] = f"comparator must be one of {', '.join(COMPARATORS)}"
            elif q["comparator"] not in ("Exists", "DoesNotExist") and not all(
                isinstance(v, int) and not isinstance(v, bool) for v in q.get("values", []) or [None]
            ):
                errors[f"qualifications[{i}]"] = "values must be a non-empty list of whole numbers"
    for key in ("allow_qualification_id", "block_qualification_id"):
        value = req.get(key)
        if value is not None and not QUALIFICATION_ID.match(str(value)):
            errors[key] = "a qualification type id of capital letters and digits"
    if req.get("allow_list") and "allow_list" not in errors and not req.get("allow_qualification_id"):
        # MTurk cannot list workers on a HIT; the allow list works through a qualification granted to it.
        errors["allow_list"] = "on MTurk an allow list needs allow_qualification_id (the qualification granted to it)"


def qualification_requirements(req: dict) -> list[dict]:
    """QualificationRequirements for CreateHITType, in the shape of botocore's MTurk service model."""
    out = []
    if req.get("locales"):
        locales = [{"Country": c} for c in req["locales"]]
        comparator = "EqualTo" if len(locales) == 1 else "In"
        out.append({"QualificationTypeId": LOCALE_QUALIFICATION, "Comparator": comparator, "LocaleValues": locales})
    for key, qualification in (
        ("min_approval_rate", PERCENT_APPROVED_QUALIFICATION), ("min_hits_approved", NUMBER_APPROVED_QUALIFICATION)
    ):
        if req.get(key) is not None:
            out.append({"QualificationTypeId": qualification, "Comparator": "GreaterThanOrEqualTo", "IntegerValues": [req[key]]})
    for q in req.get("qualifications", []):
        item = {"QualificationTypeId": q["id"], "Comparator": q["comparator"]}
        if q.get("values"):
            item["IntegerValues"] = list(q["values"])
        out.append(item)
    if req.get("allow_qualification_id"):
        out.append({"QualificationTypeId": req["allow_qualification_id"], "Comparator": "Exists"})
    if req.get("block_qualification_id"):
        out.append({"QualificationTypeId": req["block_qualification_id"], "Comparator": "DoesNotExist"})
    return out
