"""What the organizer API of every app shares: who may call it (`permissions`), serializers that
refuse unknown fields (`strict`), the multipart parser that refuses an empty body (`parsers`) and
bounded paging (`pagination`)."""
