"""The one shape of a 202 Accepted in every app's API: the work goes on in the background, and the
`Location` header names, as an absolute URL, a resource whose GET says how the work stands (its
state, progress where the run keeps it, the error in words, where the result is once done).

A client should never have to guess a URL to learn whether its work is done or has failed.
"""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers, status
from rest_framework.response import Response

from quorum.progress import is_finished


def accepted(request, body, follow: str) -> Response:
    """A 202 with `body` whose Location is the absolute URL of `follow` (a path a GET answers)."""
    return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": request.build_absolute_uri(follow)})


def absolute(context: dict, path: str) -> str:
    """`path` as an absolute URL when a serializer's `context` has the request, else as it is."""
    request = context.get("request")
    return request.build_absolute_uri(path) if request else path


def location_header(what: str) -> OpenApiParameter:
    """The schema's Location header of an operation's 202; `what` says what a GET on it answers."""
    return OpenApiParameter("Location", OpenApiTypes.URI, OpenApiParameter.HEADER, response=[202], description=what)


class FollowedRunFields(serializers.ModelSerializer):
    """The fields by which a client follows a background run (a row with status, done, total and
    error): its share done, whether it has ended, and its own URL, the one its 202 named."""

    progress = serializers.FloatField(read_only=True, help_text="Share done, from 0 to 1.")
    finished = serializers.SerializerMethodField(help_text="Whether the run has ended (succeeded or failed): stop polling.")
    url = serializers.SerializerMethodField(
        help_text="Where to follow the run: GET it until `finished` (the 202 that started it names it in Location)."
    )

    def get_finished(self, run) -> bool:
        return is_finished(run)

    def get_url(self, run) -> str:
        return absolute(self.context, self.run_path(run))

    def run_path(self, run) -> str:
        """The path of the run's own GET."""
        raise NotImplementedError
