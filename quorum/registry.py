"""The one way an app offers "who can do this" to the apps above it.

Quorum extends in two ways (docs/architecture.md, "Extending Quorum"): a signal says that something
happened, and whoever cares follows it; a `Registry` says who can do something, and the app that
asks looks the answer up by key. A lower app (annotation) owns the registry; a higher app (hits,
evaluation) fills it in its `AppConfig.ready()`, so nothing imports upwards.

Why not a signal for these: a signal fans out to every receiver and ignores what they return; a
registry has one entry per key, refuses a second one, and says which keys exist when asked for one
that does not.
"""
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

T = TypeVar("T")


class Registry(Generic[T]):
    """Named entries of one kind. `what` says in words what an entry is, for errors and the docs."""

    def __init__(self, name: str, what: str):
        self.name = name
        self.what = what
        self._entries: dict[str, T] = {}

    def register(self, key: str, entry: T) -> T:
        """Add `entry` under `key`. Registering the same entry again is a no-op (a `ready()` may run
        twice in tests); a different entry under a taken key is a ValueError."""
        current = self._entries.get(key)
        if current is not None and current is not entry:
            raise ValueError(f"{self.name}: {key!r} is already registered ({current!r})")
        self._entries[key] = entry
        return entry

    def get(self, key: str) -> T | None:
        return self._entries.get(key)

    def __getitem__(self, key: str) -> T:
        try:
            return self._entries[key]
        except KeyError:
            known = ", ".join(sorted(self._entries)) or "none"
            raise LookupError(f"{self.name}: no {self.what} registered as {key!r}; registered: {known}") from None

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def items(self) -> list[tuple[str, T]]:
        return list(self._entries.items())

    def values(self) -> list[T]:
        return list(self._entries.values())

    @contextmanager
    def override(self, key: str, entry: T | None) -> Iterator[None]:
        """For tests: `entry` under `key` (None: no entry) inside the block, what was there after."""
        had = key in self._entries
        previous = self._entries.get(key)
        if entry is None:
            self._entries.pop(key, None)
        else:
            self._entries[key] = entry
        try:
            yield
        finally:
            if had:
                self._entries[key] = previous  # type: ignore[assignment]  # had: previous is a T
            else:
                self._entries.pop(key, None)

    def __repr__(self) -> str:
        return f"<Registry {self.name}: {', '.join(self._entries) or 'empty'}>"
