"""Worker requirements of a job, as stored in `JobCrowdConfig.requirements`: the rules every provider
shares. Pure: no Django. Each provider package adds its own keys (its options.py, `requirement=True`)
and checks (its requirements.py); `hits.providers.clean_requirements(key, requirements)` puts them
together.

Shared keys (optional):

- ``allow_list``: provider worker ids allowed to work (empty: everyone who meets the rest).
"""
import re

COMMON_KEYS = frozenset({"allow_list"})
QUALIFICATION_ID = re.compile(r"^[A-Z0-9]{1,64}$")


class RequirementsError(ValueError):
    def __init__(self, errors: dict):
        self.errors = errors
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))


def clean(requirements: dict | None, *, known_keys, defaults=None, check=None) -> dict:
    """Validated requirements with `defaults` filled in; `check(req, errors)` adds a provider's own
    findings. RequirementsError says what to fix, for every key at once."""
    if requirements is not None and not isinstance(requirements, dict):
        # dict() of true, a number or a list is a TypeError: say what the field takes instead.
        raise RequirementsError({"requirements": "an object of requirement keys and values, e.g. {\"allow_list\": [\"A1WORKER\"]}"})
    req = dict(requirements or {})
    errors = {}
    unknown = sorted(set(req) - set(known_keys))
    if unknown:
        errors["keys"] = f"unknown keys {', '.join(unknown)}; use {', '.join(sorted(known_keys))}"
    for key, value in (defaults or {}).items():
        req.setdefault(key, value)
    allow = req.get("allow_list", [])
    if not isinstance(allow, list) or any(not isinstance(w, str) or not w for w in allow):
        errors["allow_list"] = "a list of worker ids"
    if check is not None:
        check(req, errors)
    if errors:
        raise RequirementsError(errors)
    return req

