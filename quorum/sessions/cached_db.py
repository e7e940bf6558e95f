"""`SESSION_ENGINE = "quorum.sessions.cached_db"`: Django's cached database sessions, the database
read (on a cache miss) compiled (see the package)."""
from django.contrib.sessions.backends import cached_db

from . import CompiledSessionRead


class SessionStore(CompiledSessionRead, cached_db.SessionStore):
    pass
