"""What the services that write or read tens of thousands of rows at once share (imports, job creation).

A MultiWOZ import writes 140,000 turns and a job over it 70,000 items: at that size the per-value
cost of Python's json module and the cyclic garbage collector are seconds (perf/bench_import.py).
"""
import gc
import json
import logging
from contextlib import contextmanager
from json.encoder import c_make_encoder, encode_basestring_ascii  # type: ignore[attr-defined]  # CPython's C encoder; typeshed does not list it

from django.db import DatabaseError, connection, transaction

logger = logging.getLogger(__name__)

#: After a bulk write of at least this many rows the tables' planner statistics are refreshed.
ANALYZE_AFTER_ROWS = 5000


def refresh_statistics(rows: int, *models) -> bool:
    """ANALYZE the models' tables on PostgreSQL after a bulk write of `rows` rows (issue 25: a job
    made right after a 16,000-item import took 68 s on stale statistics, 1.2 s after ANALYZE).
    Autovacuum would get there, minutes later; the next query should not wait for it. Called after
    the write's transaction; a failure is logged (in a savepoint), never the write's failure."""
    if connection.vendor != "postgresql" or rows < ANALYZE_AFTER_ROWS:
        return False
    tables = ", ".join(connection.ops.quote_name(m._meta.db_table) for m in models)
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(f"ANALYZE {tables}")
    except DatabaseError:
        logger.warning("could not refresh the statistics of %s", tables, exc_info=True)
        return False
    return True


@contextmanager
def cyclic_gc_paused():
    """Pause the cyclic garbage collector while many rows are built or read.

    Parsed JSON and database rows are millions of small dicts, lists and tuples, none in a
    reference cycle, all freed by reference counting once their batch is written. The cyclic
    collector would rescan them again and again: about 40% of an import's CPU time on MultiWOZ,
    half of reading a job's turns back. Restored afterwards.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _json_encoder():
    # json.dumps builds its C encoder again on every call, with a dict to detect cycles (half the
    # cost of a small value); parsed JSON and payloads have none, so one encoder without the check
    # is made once. The text is the same as json.dumps gives.
    encoder = json.JSONEncoder(check_circular=False)
    if c_make_encoder is None:  # a Python without the _json accelerator
        return encoder.encode
    make = c_make_encoder(
        None, encoder.default, encode_basestring_ascii, None, encoder.key_separator, encoder.item_separator,
        False, False, True,
    )

    def encode(value) -> str:
        if isinstance(value, str):
            return encode_basestring_ascii(value)  # as JSONEncoder.encode does
        return "".join(make(value, 0))

    return encode


#: value -> json.dumps(value), for values without reference cycles.
encode_json = _json_encoder()


def decode_json_texts(texts: list) -> list:
    """json.loads of each of `texts`, in one call: the texts come from a JSON column (SQLite checks
    JSON_VALID, PostgreSQL stores jsonb), so each is one whole JSON value and the list of them,
    joined with commas, is a JSON list of the same values."""
    if not texts:
        return []
    return json.loads(f"[{','.join(texts)}]")
