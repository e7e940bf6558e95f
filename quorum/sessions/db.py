"""`SESSION_ENGINE = "quorum.sessions.db"`: Django's database sessions, read compiled (see the package)."""
from django.contrib.sessions.backends import db

from . import CompiledSessionRead


class SessionStore(CompiledSessionRead, db.SessionStore):
    pass
