"""MTurk's worker requirements: the checks beyond each option's own (options.py) and the
QualificationRequirements they become. Pure.

``locales`` become MTurk's Locale, ``min_approval_rate`` PercentAssignmentsApproved,
``min_hits_approved`` NumberHITsApproved; ``qualifications`` are added as given; the shared
``allow_list`` works through ``allow_qualification_id`` and soft blocks through
``block_qualification_id``.
"""
from ...policy.requirements import QUALIFICATION_ID

LOCALE_QUALIFICATION = "00000000000000000071"
PERCENT_APPROVED_QUALIFICATION = "000000000000000000L0"
NUMBER_APPROVED_QUALIFICATION = "00000000000000000040"
COMPARATORS = (
    "LessThan", "LessThanOrEqualTo", "GreaterThan", "GreaterThanOrEqualTo", "EqualTo", "NotEqualTo",
    "Exists", "DoesNotExist", "In", "NotIn",
)


def check(req: dict, errors: dict) -> None:
    """What the options cannot see one by one: each qualification, and the allow list's qualification."""
    quals = req.get("qualifications") or []
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
    for q in req.get("qualifications") or []:
        item = {"QualificationTypeId": q["id"], "Comparator": q["comparator"]}
        if q.get("values"):
            item["IntegerValues"] = list(q["values"])
        out.append(item)
    if req.get("allow_qualification_id"):
        out.append({"QualificationTypeId": req["allow_qualification_id"], "Comparator": "Exists"})
    if req.get("block_qualification_id"):
        out.append({"QualificationTypeId": req["block_qualification_id"], "Comparator": "DoesNotExist"})
    return out
