"""What the organizer API of every app shares: who may call it (`permissions`), serializers that
refuse unknown fields (`strict`), the multipart parser that refuses an empty body (`parsers`),
bounded paging (`pagination`), query parameters an endpoint does not take refused (`query`) and the 202 that names where to follow the work (`accepted`)."""
