"""A new row and a row that refers to it, written in one statement on PostgreSQL.

Why: the annotation loop stores every response with its first audit row (`ResponseTransition`),
and on PostgreSQL each statement is a round trip that costs both sides more than the insert itself
(issue 26, perf/bench_cycle.py). A data-modifying CTE inserts the first row and hands its key to the
second in the same statement, so the pair is one round trip and, like two inserts in a transaction,
both or neither. Django's ORM has no such insert; the SQL of the first row is still Django's own
(`InsertQuery`, as `Model.save` builds it: defaults, `auto_now_add` and the fields' `pre_save`).
Elsewhere (SQLite) the two rows are saved one after the other, in the caller's transaction.
"""
from django.db import connections
from django.db.models import ForeignKey, Model
from django.db.models.sql import InsertQuery


def insert_pair(leader: Model, follower: Model, link: str, using: str = "default") -> None:
    """Insert unsaved `leader`, then unsaved `follower` with its foreign key `link` set to the
    leader: both get their keys and are saved instances afterwards, as `save()` leaves them. Call
    inside a transaction when a failure of the second must take the first back (on SQLite they are
    two statements)."""
    connection = connections[using]
    if connection.vendor != "postgresql":
        leader.save(force_insert=True, using=using)
        setattr(follower, link, leader)
        follower.save(force_insert=True, using=using)
        return
    leader_sql, leader_params = _insert_sql(leader, using)
    link_field = follower._meta.get_field(link)
    if not isinstance(link_field, ForeignKey) or link_field.related_model is not leader.__class__:
        raise TypeError(f"{link} is not {follower.__class__.__name__}'s foreign key to {leader.__class__.__name__}")
    fields = [f for f in _inserted_fields(follower) if f is not link_field]
    values = [f.get_db_prep_save(f.pre_save(follower, True), connection) for f in fields]
    quote = connection.ops.quote_name
    link_column, leader_key_column, follower_key_column = (
        quote(str(f.column)) for f in (link_field, leader._meta.pk, follower._meta.pk)
    )
    sql = (
        f"WITH leader AS ({leader_sql}) "
        f"INSERT INTO {quote(follower._meta.db_table)} ({', '.join(quote(str(f.column)) for f in fields)}, {link_column}) "
        f"SELECT {', '.join(['%s'] * len(fields))}, leader.{leader_key_column} FROM leader "
        f"RETURNING {link_column}, {follower_key_column}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*leader_params, *values])
        leader_key, follower_key = cursor.fetchone()
    for obj, key in ((leader, leader_key), (follower, follower_key)):
        obj.pk = key
        obj._state.adding, obj._state.db = False, using
    setattr(follower, link, leader)


def _inserted_fields(obj: Model) -> list:
    """The columns `Model.save` writes for a new row: every local concrete one but a generated key."""
    meta = obj._meta
    fields = [f for f in meta.local_concrete_fields if not f.generated]
    if obj.pk is None and meta.auto_field is not None:
        fields = [f for f in fields if f is not meta.auto_field]
    return fields


def _insert_sql(obj: Model, using: str) -> tuple[str, tuple]:
    """The INSERT ... RETURNING key that `obj.save(force_insert=True)` sends (one row)."""
    query = InsertQuery(obj.__class__)
    query.insert_values(_inserted_fields(obj), [obj], raw=False)
    compiler = query.get_compiler(using=using)
    compiler.returning_fields = [obj._meta.pk]
    [(sql, params)] = compiler.as_sql()
    return sql, tuple(params)
