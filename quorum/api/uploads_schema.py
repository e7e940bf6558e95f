"""Uploads declared as files in the API schema (a drf-spectacular postprocessing hook).

A serializer's FileField is described as a string of format `uri` (what a response holds), so in a
multipart request the docs page showed a text box and the server answered "The submitted data was
not a file". Here every multipart request body gets its own copy of its schema in which each file
field (a `uri` string, or a list of them) is a `binary` string: "Try it out" then offers a file
picker. JSON bodies and responses keep the shared component.

Every operation that reads a body also documents the 415 DRF answers when the body's media type is
not one it reads (for example no Content-Type at all), so a client knows that answer is possible.
"""
import copy


def declare_uploads_binary(result, generator, request, public):
    components = result.get("components", {}).get("schemas", {})
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            content = (operation.get("requestBody") or {}).get("content", {})
            multipart = content.get("multipart/form-data")
            if multipart and "schema" in multipart:
                multipart["schema"] = _with_binary_files(multipart["schema"], components)
            if content:
                operation.setdefault("responses", {}).setdefault("415", UNSUPPORTED_MEDIA_TYPE)
    return result


UNSUPPORTED_MEDIA_TYPE = {
    "description": "The body's media type is not one this operation reads; the body says which type was sent.",
    "content": {"application/json": {"schema": {"type": "object", "properties": {"detail": {"type": "string"}}}}},
}


def _with_binary_files(schema: dict, components: dict) -> dict:
    ref = schema.get("$ref", "")
    resolved = copy.deepcopy(components.get(ref.rsplit("/", 1)[-1], {}) if ref else schema)
    for name, prop in resolved.get("properties", {}).items():
        if "url" in name.lower():
            continue  # an address given as text, not a file
        target = prop.get("items", {}) if prop.get("type") == "array" else prop
        if target.get("type") == "string" and target.get("format") == "uri":
            target["format"] = "binary"
    return resolved
