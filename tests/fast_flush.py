"""Empties the tables after a transactional test by DELETE instead of TRUNCATE, on PostgreSQL.

A test marked `django_db(transaction=True)` (every browser test, the concurrency tests) ends with
Django's flush: one TRUNCATE of every table, then the post_migrate signal that creates the content
types and permissions again. PostgreSQL gives each truncated table and each of its indexes a new
file, however few rows the test left, which costs far more than the test's own writes. DELETE of the
same tables in one transaction leaves them as empty: foreign keys are checked at its commit (Django
creates them DEFERRABLE INITIALLY DEFERRED) and sequences go on as after TRUNCATE without RESTART
IDENTITY. The content types and permissions, which post_migrate would only insert again, are kept
(no test makes its own); the signal still runs and adds any that are missing. A flush that resets
sequences or cascades into tables outside the flushed apps (a test with `available_apps`) keeps
Django's TRUNCATE.
"""
from django.db.backends.postgresql.operations import DatabaseOperations

_truncate = DatabaseOperations.sql_flush
#: What post_migrate rebuilds after every flush: the same rows, kept rather than inserted again.
_REBUILT_BY_MIGRATE = {"django_content_type", "auth_permission"}


def _delete_rows(self, style, tables, *, reset_sequences=False, allow_cascade=False):
    if not tables or reset_sequences or allow_cascade:
        return _truncate(self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
    emptied = [table for table in tables if table not in _REBUILT_BY_MIGRATE]
    # One statement: the flush sends each item of the list as its own round trip.
    return ["; ".join(f"DELETE FROM {self.quote_name(table)}" for table in emptied)]


def install():
    """Used by tests/conftest.py for the whole test process."""
    DatabaseOperations.sql_flush = _delete_rows
