"""Query parameters an endpoint does not know are refused, not ignored.

DRF reads only the query parameters a view asks for, so `GET /api/jobs/?state=live` answered every
job, and `?limt=5` a full page, without a word: a client believed it had filtered. Every view of the
organizer API (annotation, hits, evaluation) mixes this in: a parameter the endpoint does not take is
a 400 that names it and lists what the endpoint takes. What it takes is what the API schema
documents for it (`tests/test_query_parameters.py` holds the two equal): the page's `limit` and
`offset` where the answer is a page, and what a view or action names in `query_parameters` (an
`@action` keyword, like `pagination_class`). `format`, DRF's renderer override, is taken everywhere.
"""
from rest_framework.exceptions import ValidationError
from rest_framework.mixins import ListModelMixin
from rest_framework.settings import api_settings


def pages(view, request) -> bool:
    """Whether this request's answer is a page (so `limit` and `offset` mean something)."""
    if request.method != "GET" or getattr(view, "paginator", None) is None:
        return False
    action = getattr(view, "action", None)
    if action is None:  # a generic view that is not a viewset
        return isinstance(view, ListModelMixin)
    # A viewset's list, or an @action that keeps the viewset's paging (one that does not page says
    # pagination_class=None); a handler mapped by hand (a download) does not page.
    return action == "list" or hasattr(getattr(view, action, None), "mapping")


def accepted_query_parameters(view, request) -> list[str]:
    """The query parameters this request may carry, as the schema documents them (without `format`)."""
    names = list(getattr(view, "query_parameters", ()))
    if pages(view, request):
        paginator = view.paginator
        names += [paginator.limit_query_param, paginator.offset_query_param]
    return sorted(names)


class RefusesUnknownQueryParameters:
    # Mixed in before DRF's view classes. No docstring: drf-spectacular would take it as the
    # description of every view without one of its own.

    #: Query parameters the view (or, as an @action keyword, the action) takes besides paging.
    query_parameters: tuple[str, ...] = ()

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)  # type: ignore[misc]  # authentication and permissions answer first
        accepted = accepted_query_parameters(self, request)
        unknown = sorted(set(request.query_params) - set(accepted) - {api_settings.URL_FORMAT_OVERRIDE})
        if unknown:
            takes = f"this endpoint takes {', '.join(accepted)}" if accepted else "this endpoint takes none"
            raise ValidationError({name[:60]: [f"Unknown query parameter; {takes}."] for name in unknown})


REFUSED_QUERY = {
    "description": "A query parameter the endpoint does not take; the body names it and lists those it takes.",
    "content": {"application/json": {"schema": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}}}},
}


def document_refused_query_parameters(result, generator, request, public):
    """drf-spectacular post-processing hook: every operation of ours documents the 400 an unknown
    query parameter gets (where it documents no 400 of its own)."""
    for path, operations in result.get("paths", {}).items():
        if path in ("/api/schema/", "/api/docs/"):
            continue
        for operation in operations.values():
            operation.setdefault("responses", {}).setdefault("400", REFUSED_QUERY)
    return result
