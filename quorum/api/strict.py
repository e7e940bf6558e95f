"""Write serializers that name the fields they do not know instead of dropping them.

DRF ignores keys a serializer does not declare, so a misspelt field ("slots" for "slot_values",
"budgett") leaves the default in place without a word. Every serializer that reads a request body
in the organizer API (annotation, hits, evaluation) mixes this in: an undeclared key is a 400 that
names it and lists the accepted fields.
"""
from rest_framework import serializers


class RefusesUnknownFields:
    # Mixed in before `serializers.Serializer`. No docstring: drf-spectacular would give it, as the
    # description in the API docs, to every serializer without one of its own.

    def to_internal_value(self, data):
        if hasattr(data, "keys"):
            accepted = sorted(name for name, field in self.fields.items() if not field.read_only)
            unknown = sorted(set(data.keys()) - set(self.fields))
            if unknown:
                message = f"Unknown field; the accepted fields are: {', '.join(accepted)}."
                raise serializers.ValidationError({name: [message] for name in unknown})
        return super().to_internal_value(data)
