"""Writes for blocks: keep a worker from one job or from all, softly or hard."""
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.models import Job, Worker

from .. import providers
from ..models import Block, JobCrowdConfig


class BlockError(ValueError):
    pass


def block_worker(*, worker: Worker, kind: str, reason: str, job: Job | None = None, by=None) -> Block:
    """Block a worker; where the provider keeps blocks of its own (MTurk), it is told too."""
    if kind not in Block.Kind.values:
        raise BlockError("choose a soft or a hard block")
    if not reason or not reason.strip():
        raise BlockError("give a reason for the block (kept for the record; MTurk shows it for hard blocks)")
    try:
        with transaction.atomic():
            block = Block.objects.create(worker=worker, job=job, kind=kind, reason=reason.strip(), created_by=by)
    except IntegrityError:
        block = Block.objects.get(worker=worker, job=job, kind=kind)
    provider = providers.get(worker.provider)
    if provider.syncs_blocks and block.synced_at is None:
        config = JobCrowdConfig.objects.filter(job=job).first() if job else None
        requirements = (config.requirements if config else {}) or {}
        provider.apply_block(block, worker.external_id, requirements)
        Block.objects.filter(pk=block.pk).update(synced_at=timezone.now())
    return block


def unblock_worker(*, worker: Worker, kind: str, job: Job | None = None) -> int:
    """Lift a block in Quorum (a hard MTurk block must also be lifted at MTurk)."""
    deleted, _ = Block.objects.filter(worker=worker, job=job, kind=kind).delete()
    return deleted
