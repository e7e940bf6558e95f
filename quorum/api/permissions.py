"""Who may use the organizer API: organizers only, checked on the view and on every object."""
from django.conf import settings
from rest_framework.permissions import BasePermission

from quorum.roles import is_organizer

ORGANIZERS_ONLY = "Only organizers may use the Quorum API; ask an administrator to add you to the organizers group."


def _request_is_organizer(request) -> bool:
    """The answer for this request's user, asked of the database once per request: a detail route
    asks twice (the view's check and the object's)."""
    answer = getattr(request, "_quorum_is_organizer", None)
    if answer is None:
        answer = request._quorum_is_organizer = is_organizer(request.user)
    return answer


class IsOrganizer(BasePermission):
    message = ORGANIZERS_ONLY

    def has_permission(self, request, view):
        return _request_is_organizer(request)

    def has_object_permission(self, request, view, obj):
        # Every organizer sees every corpus, job and run; the object check keeps a detail route
        # closed even if a view's class-level permission is ever widened.
        return _request_is_organizer(request)


class SchemaReaders(BasePermission):
    """Who may read the OpenAPI schema and its docs page: anyone while QUORUM_API_SCHEMA_PUBLIC is
    on (the default), organizers only when it is off."""

    message = "The API schema is for organizers only on this installation (QUORUM_API_SCHEMA_PUBLIC is off)."

    def has_permission(self, request, view):
        return settings.QUORUM_API_SCHEMA_PUBLIC or is_organizer(request.user)
