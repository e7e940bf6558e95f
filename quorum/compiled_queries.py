"""A hot queryset's SQL compiled once per process and run again with new parameter values.

Why the ORM is bypassed here, and only here: building and compiling a queryset costs Django far
more CPU than running it. The annotation loop's work-page read joins six tables and carries four
subqueries; compiling it twice per cycle was half of a cycle's Python time (issue 26, measured in
perf/bench_cycle.py). Its SQL never changes between calls, only the values, so `CompiledQuery`
builds the queryset once with stand-in values, keeps the SQL and where each value goes, and then
only runs it. Instances are made from the rows exactly as the queryset's own iteration makes them
(the compiler's converters, `select_related` populators and annotations), so callers get the
same objects.

On PostgreSQL the statement is also prepared on the server (`prepared_cursor`): the work-page read
cost PostgreSQL more to plan than to run. `QUORUM_PREPARED_STATEMENTS=false` turns that off, for a
connection pooler in transaction mode (PgBouncer before 1.21), which cannot keep a session's
prepared statements.

It checks itself when it compiles: the queryset is built twice with different stand-ins, and the
two must give the same SQL and differ in exactly the stand-ins' positions. A queryset whose SQL
depends on the values (e.g. an `IN` list of varying length) therefore fails at once instead of
running with wrong parameters.
"""
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any, Generic, TypeVar

from django.conf import settings
from django.db import connections
from django.db.models import Model, QuerySet
from django.db.models.query import get_related_populators  # type: ignore[attr-defined]  # not in the stubs; ModelIterable's own
from django.db.models.sql import UpdateQuery

#: Stand-ins no real key or moment takes; each name gets its own, each of the two builds others.
#: Positive and within a small integer column's range: Django compiles a lookup outside a field's
#: range (a negative one on a positive field) as matching nothing, without the value. A constant of
#: the query equal to a stand-in would show as a difference between the builds, refused, never misread.
_INT_BASE = 30_011
_TIME_BASE = datetime(2, 1, 1, tzinfo=UTC)


def _stand_in(kind: type, build: int, index: int) -> Any:
    if kind is int:
        return _INT_BASE + 1000 * build + index
    if kind is datetime:
        return _TIME_BASE + timedelta(days=100 * build + index)
    if kind is str:
        return f"quorum-stand-in-{build}-{index}"
    raise TypeError(f"no stand-in for {kind.__name__} values")


M = TypeVar("M", bound=Model)


class _Compiled:
    """A statement built by `_statement(**values)` -> (compiler, sql, params), compiled on first use
    and checked (see the module's docstring); `sql_with_params(**values)` fills in new values."""

    def __init__(self, using: str, kinds: dict[str, type]):
        self._using, self._kinds = using, kinds
        self._compiled: tuple[Any, str, list, dict[int, str]] | None = None

    def _statement(self, **values) -> tuple[Any, str, list]:
        raise NotImplementedError

    def _compile(self):
        names = list(self._kinds)
        built = []
        for build in (0, 1):
            values = {name: _stand_in(self._kinds[name], build, i) for i, name in enumerate(names)}
            compiler, sql, params = self._statement(**values)
            built.append((compiler, sql, list(params), {self._adapt(n, v): n for n, v in values.items()}))
        (compiler, sql, params, first), (_c, sql_again, params_again, second) = built
        if sql != sql_again or len(params) != len(params_again):
            raise ValueError("this queryset's SQL depends on its values: it cannot be compiled once")
        slots = {i: first[p] for i, p in enumerate(params) if _hashable(p) and p in first}
        differing = {i for i, (a, b) in enumerate(zip(params, params_again, strict=True)) if not _same(a, b)}
        if differing != set(slots) or any(second.get(params_again[i]) != n for i, n in slots.items()):
            raise ValueError("this queryset's SQL depends on its values: it cannot be compiled once")
        if set(slots.values()) != set(names):
            raise ValueError(f"values not used by the query: {sorted(set(names) - set(slots.values()))}")
        self._compiled = (compiler, sql, params, slots)
        self._compiled_once(compiler)
        return self._compiled

    def _compiled_once(self, compiler) -> None:
        """What a subclass keeps of the compiler for every run."""

    def _adapt(self, name: str, value):
        """The value as the compiled SQL's parameters carry it: a backend may adapt a moment while
        compiling (SQLite makes it a UTC string; PostgreSQL's driver takes it as it is)."""
        if self._kinds[name] is datetime:
            return connections[self._using].ops.adapt_datetimefield_value(value)
        return value

    def sql_with_params(self, **values) -> tuple[str, list]:
        """The SQL and its parameters for these values (for a statement that embeds the query)."""
        _compiler, sql, params, slots = self._compiled or self._compile()
        filled = list(params)
        for index, name in slots.items():
            filled[index] = self._adapt(name, values[name])
        return sql, filled


class CompiledQuery(_Compiled, Generic[M]):
    """`build(**values)` (a queryset) compiled on first use; `sql_with_params(**values)` and
    `fetch(**values)` run it with new values. `kinds` names each value's type (int, str or datetime)."""

    def __init__(self, build: Callable[..., QuerySet[M]], using: str = "default", **kinds: type):
        super().__init__(using, kinds)
        self._build = build

    def _statement(self, **values):
        compiler = self._build(**values).query.get_compiler(using=self._using)
        sql, params = compiler.as_sql()
        return compiler, sql, params

    def _compiled_once(self, compiler) -> None:
        # What django.db.models.query.ModelIterable works out from a compiler on every iteration.
        select, klass_info = compiler.select, compiler.klass_info
        first, last = klass_info["select_fields"][0], klass_info["select_fields"][-1] + 1
        self._reader = (
            klass_info["model"], first, last,
            [column[0].target.attname for column in select[first:last]],
            get_related_populators(klass_info, select, self._using),
            list((compiler.annotation_col_map or {}).items()),
            compiler.get_converters([column[0] for column in select[0 : compiler.col_count]]),
        )

    def fetch(self, **values) -> list[M]:
        """The queryset's model instances for these values, as iterating it would give them."""
        sql, params = self.sql_with_params(**values)
        compiler = self._compiled[0]  # type: ignore[index]  # compiled by sql_with_params
        with prepared_cursor(self._using) as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
        model_cls, first, last, init_list, populators, annotations, converters = self._reader
        found = []
        for row in compiler.apply_converters(rows, converters) if converters else rows:
            obj = model_cls.from_db(self._using, init_list, row[first:last])
            for populator in populators:
                populator.populate(row, obj)
            for attr_name, position in annotations:
                setattr(obj, attr_name, row[position])
            found.append(obj)
        return found


class CompiledUpdate(_Compiled):
    """`build(**values)` -> (queryset, {field: new value}), the UPDATE that `queryset.update(...)`
    would send, compiled on first use; `run(**values)` sends it and returns the rows it changed.
    The new values are constants of the statement (or stand-in names of `kinds` too)."""

    def __init__(self, build: Callable[..., tuple[QuerySet, dict]], using: str = "default", **kinds: type):
        super().__init__(using, kinds)
        self._build = build

    def _statement(self, **values):
        queryset, changes = self._build(**values)
        # As QuerySet.update builds its statement.
        query = queryset.query.chain(UpdateQuery)
        query.add_update_values(changes)
        query.annotations = {}
        compiler = query.get_compiler(using=self._using)
        compiler.pre_sql_setup()
        sql, params = compiler.as_sql()
        if query.related_updates:
            raise ValueError("an update of a parent model's table too is more than one statement")
        return compiler, sql, params

    def run(self, **values) -> int:
        sql, params = self.sql_with_params(**values)
        with prepared_cursor(self._using) as cursor:
            cursor.execute(sql, params)
            return cursor.rowcount


def _same(a, b) -> bool:
    """Equal constants; a driver's wrapper (psycopg's `Jsonb`) has no equality, but its repr shows its value."""
    return a == b or (type(a) is type(b) and repr(a) == repr(b))


def _hashable(value) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


@cache
def _preparing_cursor_class() -> type:
    """psycopg's cursor with server-side binding, every statement prepared at its first run (Django's
    cursors bind on the client and are never prepared). Made on first use: only PostgreSQL needs psycopg."""
    import psycopg

    class PreparingCursor(psycopg.Cursor):
        def execute(self, query, params=None, *, prepare=None, binary=None):
            return super().execute(query, params, prepare=True, binary=binary)

        def _maybe_prepare_gen(self, pgq, *, prepare=None, binary=None):
            # psycopg keeps the statement it sent for Django's query log (last_executed_query) only
            # when it did not prepare it.
            self._query = pgq
            return super()._maybe_prepare_gen(pgq, prepare=prepare, binary=binary)

    return PreparingCursor


def _same_time_zone_as_django(connection, cursor) -> None:
    """What Django's `create_cursor` does for its cursors: times read in the connection's zone."""
    from django.db.backends.postgresql.psycopg_any import register_tzloader
    from psycopg import adapters
    from psycopg.pq import Format

    timestamptz = adapters.types["timestamptz"].oid
    if connection.timezone != connection.connection.adapters.get_loader(timestamptz, Format.TEXT).timezone:
        register_tzloader(connection.timezone, cursor)


#: psycopg's count of runs before it prepares a statement by itself: never, in effect. Django's own
#: cursors bind on the client and are never prepared; only `prepared_cursor`'s ask to be.
_ONLY_WHEN_ASKED = 2**62


@contextmanager
def prepared_cursor(using: str = "default") -> Iterator[Any]:
    """A cursor of connection `using` whose statements PostgreSQL keeps prepared for the session
    (parsed and planned once, then run with each call's values); Django's own cursor elsewhere, or
    with QUORUM_PREPARED_STATEMENTS off. Wrapped as Django wraps its cursors, so query logging,
    `execute_wrapper` and database error translation see these statements too."""
    connection = connections[using]
    if connection.vendor != "postgresql" or not settings.QUORUM_PREPARED_STATEMENTS:
        with connection.cursor() as cursor:
            yield cursor
        return
    connection.ensure_connection()
    connection.validate_thread_sharing()
    driver = connection.connection
    if driver.prepare_threshold is None:  # Django's default: psycopg then prepares nothing, even when asked
        driver.prepare_threshold = _ONLY_WHEN_ASKED
    with connection.wrap_database_errors:
        raw = _preparing_cursor_class()(driver)
    _same_time_zone_as_django(connection, raw)
    wrap = connection.make_debug_cursor if connection.queries_logged else connection.make_cursor
    with wrap(raw) as cursor:
        yield cursor
