"""The filters a Prolific study carries. Pure.

The option ``prolific_filters`` (options.py): ``[{"filter_id": ..., "selected_values": [...]}]`` or
``[{"filter_id": ..., "selected_range": {"lower": ..., "upper": ...}}]``. The shared ``allow_list``
becomes Prolific's custom allow list, and blocked participants its custom block list.
"""


def filters(req: dict, *, blocked_ids=()) -> list[dict]:
    """Prolific participant filters, with the allow list and the blocked participants added."""
    out = [dict(f) for f in req.get("prolific_filters") or []]
    if req.get("allow_list"):
        out.append({"filter_id": "custom_allowlist", "selected_values": list(req["allow_list"])})
    if blocked_ids:
        out.append({"filter_id": "custom_blocklist", "selected_values": sorted(blocked_ids)})
    return out
