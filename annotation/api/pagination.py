"""The API's pagination: DRF's limit/offset, with both bounded.

DRF clamps `limit` only when `max_limit` is set and never clamps `offset`, so
`?limit=99999999999999999999` or a huge `offset` reached the database as a number beyond a 64-bit
integer and ended in a 500. Both are clamped here: a limit to MAX_LIMIT rows, an offset to
MAX_OFFSET (past the end of any table, so the page is simply empty).
"""
from rest_framework.pagination import LimitOffsetPagination

MAX_LIMIT = 1000
MAX_OFFSET = 10**9


class BoundedLimitOffsetPagination(LimitOffsetPagination):
    max_limit = MAX_LIMIT

    def get_offset(self, request):
        return min(super().get_offset(request), MAX_OFFSET)

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        bounds = {self.limit_query_param: MAX_LIMIT, self.offset_query_param: MAX_OFFSET}
        for parameter in parameters:
            if parameter["name"] in bounds:
                parameter["description"] += f" At most {bounds[parameter['name']]:,}; larger values are clamped."
        return parameters
