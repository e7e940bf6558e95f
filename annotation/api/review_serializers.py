"""The API's view of a job's reviewer decisions and their undo (the review decisions page's data)."""
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from quorum.api.strict import RefusesUnknownFields

from ..models import CheckOverride, Response
from ..services.review import MAX_BULK

STATUSES = Response.Status.choices


def _name(user) -> str | None:
    return user.get_username() if user is not None else None


class DecisionUndoSerializer(serializers.Serializer):
    reason = serializers.CharField(help_text="Why the decision was undone.")
    by = serializers.SerializerMethodField(help_text="The organizer who undid it; null when unknown.")
    created_at = serializers.DateTimeField(help_text="When it was undone.")

    def get_by(self, undo) -> str | None:
        return _name(undo.by)


class DecisionSerializer(serializers.Serializer):
    """A reviewer's decision on a response (accept, reject, exclude) and its undo, if any."""

    id = serializers.IntegerField(help_text="The decision's id (the one to undo).")
    response = serializers.IntegerField(source="response_id", help_text="The decided response.")
    response_status = serializers.ChoiceField(source="response.status", choices=STATUSES, help_text="The response's state now.")
    check = serializers.ChoiceField(source="check_name", choices=CheckOverride.Check.choices, help_text="Which automatic verdict the decision replaced.")
    previous_status = serializers.ChoiceField(choices=STATUSES, help_text="The response's state before the decision (where an undo takes it back).")
    new_status = serializers.ChoiceField(choices=STATUSES, help_text="The state the decision gave it.")
    reason = serializers.CharField(help_text="The reviewer's reason.")
    by = serializers.SerializerMethodField(help_text="The reviewer; null when unknown.")
    recollected = serializers.BooleanField(help_text="The decision reopened the item for a new response, which an undo cannot take back.")
    created_at = serializers.DateTimeField(help_text="When it was decided.")
    undo = serializers.SerializerMethodField(help_text="The undo of the decision; null while it stands.")

    def get_by(self, decision) -> str | None:
        return _name(decision.by)

    @extend_schema_field(DecisionUndoSerializer(allow_null=True))
    def get_undo(self, decision):
        undo = getattr(decision, "undo", None)
        return DecisionUndoSerializer(undo).data if undo is not None else None


class UndoRequestSerializer(RefusesUnknownFields, serializers.Serializer):
    reason = serializers.CharField(
        max_length=2000, allow_blank=False,
        help_text="Why the decision is undone; kept in the response's audit trail with the decision's own reason.",
    )


class UndoRefusedSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="Why the decision stands and what to do instead, as the review decisions page says it.")


class BulkUndoRequestSerializer(RefusesUnknownFields, serializers.Serializer):
    decisions = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=2**63 - 1), allow_empty=False, max_length=MAX_BULK,
        help_text=f"The decisions to undo (ids from review/decisions/), at most {MAX_BULK}; e.g. every decision of one bulk action.",
    )
    reason = serializers.CharField(
        max_length=2000, allow_blank=False, help_text="Why they are undone; kept in each response's audit trail.",
    )


class UndoResultSerializer(serializers.Serializer):
    decision_id = serializers.IntegerField(help_text="The decision asked for.")
    response_id = serializers.IntegerField(allow_null=True, help_text="Its response; null when it is not a decision of this job.")
    ok = serializers.BooleanField(help_text="Whether it was undone.")
    message = serializers.CharField(help_text="The state the response is back in, or why the decision stands (as the page lists it).")


class BulkUndoSerializer(serializers.Serializer):
    undone = serializers.IntegerField(help_text="How many of the decisions were undone.")
    results = UndoResultSerializer(many=True, help_text="One per decision asked for, in the order given.")
