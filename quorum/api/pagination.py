"""The API's pagination: DRF's limit/offset, with both checked and bounded.

DRF clamps `limit` only when `max_limit` is set and never clamps `offset`, so
`?limit=99999999999999999999` or a huge `offset` reached the database as a number beyond a 64-bit
integer and ended in a 500. Both are clamped here: a limit to MAX_LIMIT rows, an offset to
MAX_OFFSET (past the end of any table, so the page is simply empty). DRF also quietly replaces a
value that is not a whole number (`limit=-1`, `offset=0.5`, `limit=abc`) by its default; here it is
a 400 that says what to give, as the schema says (`document_refused_pages`).
"""
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import LimitOffsetPagination

MAX_LIMIT = 1000
MAX_OFFSET = 10**9
REFUSED_PAGE = {
    "description": "`limit` or `offset` is not a whole number in range; the body names the parameter.",
    "content": {"application/json": {"schema": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}}}},
}


def _whole_number(request, name: str, minimum: int, cap: int) -> int | None:
    """The query parameter `name` as a whole number from `minimum` on (capped at `cap`); None when absent."""
    text = request.query_params.get(name)
    if text is None:
        return None
    if not (text.isascii() and text.isdigit()) or int(text) < minimum:
        raise ValidationError({name: [f"give a whole number from {minimum} (larger than {cap:,} counts as {cap:,}); got {text[:40]!r}"]})
    return min(int(text), cap)


class BoundedLimitOffsetPagination(LimitOffsetPagination):
    max_limit = MAX_LIMIT

    def get_limit(self, request):
        limit = _whole_number(request, self.limit_query_param, 1, MAX_LIMIT)
        return self.default_limit if limit is None else limit

    def get_offset(self, request):
        offset = _whole_number(request, self.offset_query_param, 0, MAX_OFFSET)
        return offset or 0

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        bounds = {self.limit_query_param: (1, MAX_LIMIT), self.offset_query_param: (0, MAX_OFFSET)}
        for parameter in parameters:
            if parameter["name"] in bounds:
                low, high = bounds[parameter["name"]]
                parameter["schema"]["minimum"] = low
                parameter["description"] += f" From {low}; at most {high:,}, larger values are clamped."
        return parameters


def document_refused_pages(result, generator, request, public):
    """drf-spectacular post-processing hook: every paginated operation documents its 400."""
    for path in result.get("paths", {}).values():
        for operation in path.values():
            if any(p.get("name") == "limit" and p.get("in") == "query" for p in operation.get("parameters", [])):
                operation.setdefault("responses", {}).setdefault("400", REFUSED_PAGE)
    return result
