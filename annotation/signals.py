"""Signals through which higher apps (hits, evaluation) follow annotation without being imported by it."""
from django.dispatch import Signal

#: Sent after a response is committed. kwargs: response.
response_submitted = Signal()
#: Sent after a job goes live. kwargs: job.
job_launched = Signal()
#: Sent inside the claim's transaction when a worker newly claims a slot. kwargs: slot, worker.
slot_claimed = Signal()
