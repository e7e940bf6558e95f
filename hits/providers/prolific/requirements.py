"""Prolific's participant requirements: the ``prolific_filters`` key and the filters a study carries. Pure.

``prolific_filters``: ``[{"filter_id": ..., "selected_values": [...]}]`` or
``[{"filter_id": ..., "selected_range": {"lower": ..., "upper": ...}}]``. The shared ``allow_list``
becomes Prolific's custom allow list, and blocked participants its custom block list.
"""
KEYS = frozenset({"prolific_filters"})


def check(req: dict, errors: dict) -> None:
    filters = req.get("prolific_filters", [])
    if not isinstance(filters, list) or any(
        not isinstance(f, dict) or not f.get("filter_id") or not ("selected_values" in f or "selected_range" in f)
        for f in filters
    ):
        errors["prolific_filters"] = "a list of {filter_id, selected_values} or {filter_id, selected_range}"


def filters(req: dict, *, blocked_ids=()) -> list[dict]:
    """Prolific participant filters, with the allow list and the blocked participants added."""
    out = [dict(f) for f in req.get("prolific_filters", [])]
    if req.get("allow_list"):
        out.append({"filter_id": "custom_allowlist", "selected_values": list(req["allow_list"])})
    if blocked_ids:
        out.append({"filter_id": "custom_blocklist", "selected_values": sorted(blocked_ids)})
    return out
