"""The API's multipart parser: a body that holds no part at all is refused.

Django's multipart parser skips whatever comes before the first boundary, so a non-empty body with
no part in it (`null`, a stray word) read as an empty form, and an operation whose fields are all
optional (start an export, change voting) went ahead with its defaults as if nothing had been sent.
Such a body is now a 400 that says what to send; an empty body still means "no fields".
"""
from rest_framework.exceptions import ParseError
from rest_framework.parsers import MultiPartParser


class StrictMultiPartParser(MultiPartParser):
    def parse(self, stream, media_type=None, parser_context=None):
        parsed = super().parse(stream, media_type, parser_context)
        request = (parser_context or {}).get("request")
        length = int((request.META.get("CONTENT_LENGTH") if request is not None else 0) or 0)
        if length and not parsed.data and not parsed.files:
            raise ParseError("The multipart body holds no part: send each field as a part, or send no body.")
        return parsed
