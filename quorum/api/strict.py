"""Write serializers that name the fields they do not know instead of dropping them.

DRF ignores keys a serializer does not declare, so a misspelt field ("slots" for "slot_values",
"budgett") leaves the default in place without a word. Every serializer that reads a request body
in the organizer API (annotation, hits, evaluation) mixes this in: an undeclared key is a 400 that
names it and lists the accepted fields.

The same for a blank value in a form-encoded or multipart body: DRF takes `provider=` as the field
left out (HTML forms send every field, filled or not), so the request changed nothing of it and
answered 200. A blank value for a field that takes neither a blank text nor null is refused, as the
same request in JSON is.
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
            if hasattr(data, "getlist"):  # a form-encoded or multipart body (a QueryDict)
                blank = sorted(name for name in data.keys() if data.get(name) == "" and _takes_no_blank(self.fields[name]))
                if blank:
                    message = "A blank value is not one this field takes: leave the field out, or give a value."
                    raise serializers.ValidationError({name: [message] for name in blank})
        return super().to_internal_value(data)


def _takes_no_blank(field: serializers.Field) -> bool:
    return not field.read_only and not field.allow_null and not getattr(field, "allow_blank", False)
