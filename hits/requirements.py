"""Worker requirements of a job, as stored in `JobCrowdConfig.requirements`. Pure: no Django.

Keys (all optional):

- ``locales``: countries the worker must be in, ISO codes (MTurk Locale; RADDLE: ``["US"]``).
- ``min_approval_rate``: MTurk PercentAssignmentsApproved, 0-100 (RADDLE: 90).
- ``min_hits_approved``: MTurk NumberHITsApproved, optional.
- ``qualifications``: custom MTurk qualifications,
  ``[{"id": "3ABC...", "comparator": "GreaterThanOrEqualTo", "values": [80]}]``.
- ``allow_qualification_id``: MTurk qualification granted to the allow list (workers must have it).
- ``allow_list``: provider worker ids allowed to work (empty: everyone who meets the rest).
- ``block_qualification_id``: MTurk qualification that soft-blocked workers get; the HIT requires
  that a worker does not have it.
- ``prolific_filters``: Prolific participant filters, ``[{"filter_id": ..., "selected_values": [...]}]``
  or ``[{"filter_id": ..., "selected_range": {"lower": ..., "upper": ...}}]``.

MTurk defaults are RADDLE's: Locale = US and PercentAssignmentsApproved >= 90.
"""
import re

LOCALE_QUALIFICATION = "00000000000000000071"
PERCENT_APPROVED_QUALIFICATION = "000000000000000000L0"
NUMBER_APPROVED_QUALIFICATION = "00000000000000000040"
MTURK_DEFAULTS = {"locales": ["US"], "min_approval_rate": 90}
COMPARATORS = (
    "LessThan", "LessThanOrEqualTo", "GreaterThan", "GreaterThanOrEqualTo", "EqualTo", "NotEqualTo",
    "Exists", "DoesNotExist", "In", "NotIn",
)
KNOWN_KEYS = {
    "locales", "min_approval_rate", "min_hits_approved", "qualifications", "allow_qualification_id",
    "allow_list", "block_qualification_id", "prolific_filters",
}
_QUAL_ID = re.compile(r"^[A-Z0-9]{1,64}$")
_COUNTRY = re.compile(r"^[A-Z]{2}$")


class RequirementsError(ValueError):
    def __init__(self, errors: dict):
        self.errors = errors
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))


def clean(requirements: dict | None, provider: str) -> dict:
    """Validated requirements with the provider's defaults filled in; RequirementsError says what to fix."""
    req = dict(requirements or {})
    errors = {}
    unknown = sorted(set(req) - KNOWN_KEYS)
    if unknown:
        errors["keys"] = f"unknown keys {', '.join(unknown)}; use {', '.join(sorted(KNOWN_KEYS))}"
    if provider == "mturk":
        for key, value in MTURK_DEFAULTS.items():
            req.setdefault(key, value)
    locales = req.get("locales", [])
    if not isinstance(locales, list) or any(not isinstance(c, str) or not _COUNTRY.match(c) for c in locales):
        errors["locales"] = "a list of two-letter country codes such as US"
    for key, low, high in (("min_approval_rate", 0, 100), ("min_hits_approved", 0, 10**9)):
        value = req.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high):
            errors[key] = f"a whole number from {low} to {high}, or leave it out"
    quals = req.get("qualifications", [])
    if not isinstance(quals, list):
        errors["qualifications"] = "a list of {id, comparator, values}"
    else:
        for i, q in enumerate(quals):
            if not isinstance(q, dict) or not _QUAL_ID.match(str(q.get("id", ""))):
                errors[f"qualifications[{i}]"] = "needs an id of capital letters and digits"
            elif q.get("comparator") not in COMPARATORS:
                errors[f"qualifications[{i}]"] = f"comparator must be one of {', '.join(COMPARATORS)}"
            elif q["comparator"] not in ("Exists", "DoesNotExist") and not all(
                isinstance(v, int) and not isinstance(v, bool) for v in q.get("values", []) or [None]
            ):
                errors[f"qualifications[{i}]"] = "values must be a non-empty list of whole numbers"
    for key in ("allow_qualification_id", "block_qualification_id"):
        value = req.get(key)
        if value is not None and not _QUAL_ID.match(str(value)):
            errors[key] = "a qualification type id of capital letters and digits"
    allow = req.get("allow_list", [])
    if not isinstance(allow, list) or any(not isinstance(w, str) or not w for w in allow):
        errors["allow_list"] = "a list of worker ids"
    elif provider == "mturk" and allow and not req.get("allow_qualification_id"):
        errors["allow_list"] = "on MTurk an allow list needs allow_qualification_id (the qualification granted to it)"
    filters = req.get("prolific_filters", [])
    if not isinstance(filters, list) or any(
        not isinstance(f, dict) or not f.get("filter_id") or not ("selected_values" in f or "selected_range" in f)
        for f in filters
    ):
        errors["prolific_filters"] = "a list of {filter_id, selected_values} or {filter_id, selected_range}"
    if errors:
        raise RequirementsError(errors)
    return req


def mturk_qualification_requirements(req: dict) -> list[dict]:
    """QualificationRequirements for CreateHITType, in the shape of botocore's MTurk service model."""
    out = []
    if req.get("locales"):
        locales = [{"Country": c} for c in req["locales"]]
        if len(locales) == 1:
            out.append({"QualificationTypeId": LOCALE_QUALIFICATION, "Comparator": "EqualTo", "LocaleValues": locales})
        else:
            out.append({"QualificationTypeId": LOCALE_QUALIFICATION, "Comparator": "In", "LocaleValues": locales})
    if req.get("min_approval_rate") is not None:
        out.append({
            "QualificationTypeId": PERCENT_APPROVED_QUALIFICATION,
            "Comparator": "GreaterThanOrEqualTo",
            "IntegerValues": [req["min_approval_rate"]],
        })
    if req.get("min_hits_approved") is not None:
        out.append({
            "QualificationTypeId": NUMBER_APPROVED_QUALIFICATION,
            "Comparator": "GreaterThanOrEqualTo",
            "IntegerValues": [req["min_hits_approved"]],
        })
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


def prolific_filters(req: dict, *, blocked_ids=()) -> list[dict]:
    """Prolific participant filters, with the allow list and the blocked participants added."""
    out = [dict(f) for f in req.get("prolific_filters", [])]
    if req.get("allow_list"):
        out.append({"filter_id": "custom_allowlist", "selected_values": list(req["allow_list"])})
    if blocked_ids:
        out.append({"filter_id": "custom_blocklist", "selected_values": sorted(blocked_ids)})
    return out
