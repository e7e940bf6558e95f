"""Signals through which higher apps (hits, evaluation) follow annotation without being imported by it.

A signal says that something happened; it is never asked a question (who can do something is a
registry: `annotation.extensions`).
"""
from django.dispatch import Signal

#: Sent after a response is committed. kwargs: response.
response_submitted = Signal()
#: Sent inside the transaction of every move of a response's life (services.response_status), the
#: storing of a new response included (from_status ""). kwargs: response, from_status, to_status,
#: actor, reason. Receivers run in that transaction: what they write stands or falls with the move.
response_status_changed = Signal()
#: Sent inside the claim's transaction when a worker newly claims a slot. kwargs: slot, worker.
slot_claimed = Signal()
#: Sent after a job goes live. kwargs: job.
job_launched = Signal()
#: Sent after commit when a job is finished (nothing more is to be collected). kwargs: job.
job_finished = Signal()
#: Sent after commit when items are added to an existing job (`payload_jobs.add_payload_items`), or a
#: place to collect an item again (`voting.reopen_item`). kwargs: job; recollection (True for the
#: latter: more may follow soon, one per voted-down response).
items_added = Signal()
#: Sent after commit when a place added to collect an item again is taken back before anyone started it
#: (`voting.withdraw_recollection`: a reviewer accepted the turned-down response after all). kwargs: job.
places_withdrawn = Signal()
