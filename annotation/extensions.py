"""Every registry annotation offers to the apps above it, in one place.

Quorum extends in two ways (docs/architecture.md, "Extending Quorum"): `annotation.signals` say
that something happened; the registries here say who can do something. hits and evaluation fill
them in their `AppConfig.ready()`, so annotation never imports them. Task types and providers are
registries too, filled by their packages (`task_types.register`, `hits.providers.registry`).

This module imports nothing of annotation's, so any module may read a registry without a cycle.
"""
from collections.abc import Callable
from typing import Any

from quorum.registry import Registry

#: provider key -> function(slot, response) -> the URL a worker of that provider goes to after a
#: saved submit, or None for the next item. Providers not registered (in-house) get the next item.
submit_redirects: Registry[Callable[[Any, Any], str | None]] = Registry(
    "submit_redirects", "after-submit redirect"
)

#: name -> function(job) -> a reason the job may not go live, or None. Every check runs at launch.
launch_checks: Registry[Callable[[Any], str | None]] = Registry("launch_checks", "launch check")

#: name -> function(job) -> a sentence the builder reads once the job went live (what a launch
#: reserved and when it pays), or None. Called after the launch committed.
launch_notes: Registry[Callable[[Any], str | None]] = Registry("launch_notes", "launch note")

#: name -> function(job) -> True when that app must act on this job's claims inside the claim's
#: transaction (through `signals.slot_claimed`); when none does, a claim is one statement.
claim_watchers: Registry[Callable[[Any], bool]] = Registry("claim_watchers", "claim watcher")

#: relay key -> a `chat_relay.ChatRelay` that takes a chat item's turns to the system it names.
chat_relays: Registry[Any] = Registry("chat_relays", "chat relay")

#: upload store name (a task type's `upload_store`) -> keep(response, {field: Upload}, written),
#: which writes a response's files inside its transaction and notes each one on `written`.
upload_stores: Registry[Callable[..., None]] = Registry("upload_stores", "upload store")

#: name -> function(*, server, organizer, annotator_names, password, seed, say) -> a summary dict:
#: a part of `manage.py demo` that another app runs after annotation's own.
demo_parts: Registry[Callable[..., dict]] = Registry("demo_parts", "demo part")

#: name -> function(response, to_status) -> a reason this response may not move to `to_status` by a
#: reviewer's decision or its undo, or None. Called inside the decision's (the undo's) transaction with
#: the response locked; hits says no where money moved at a crowd provider (a paid approval cannot be
#: rejected, a sent rejection stands).
settlement_guards: Registry[Callable[[Any, str], str | None]] = Registry("settlement_guards", "settlement guard")

#: name -> function(job) -> (url, text) of a page another app keeps about this job (a chat job's
#: leaderboard), or None. The job page lists them beside its own sections.
job_links: Registry[Callable[[Any], tuple[str, str] | None]] = Registry("job_links", "job page link")
