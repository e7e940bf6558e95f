"""The inputs version of a campaign: a digest of everything its results depend on.

Kept apart from `campaigns` because imports refresh it too, and `campaigns` uses the imports'
error type: both import this module, which imports neither.
"""
from __future__ import annotations

import hashlib

from evaluation.models import Campaign, Rating
from evaluation.stats.report_format import REPORT_FORMAT


def inputs_version(campaign: Campaign) -> str:
    """SHA-256 over everything the results depend on: test set, questions, entries (outputs,
    flags, the uploaded and the computed objective scores) and every rating, in a fixed order."""
    digest = hashlib.sha256()
    digest.update(f"report-format:{REPORT_FORMAT}|testset:{campaign.test_set.content_hash}|questions:{campaign.questions}|raters-known:{campaign.rater_ids_known}".encode())
    if campaign.test_set.score_columns:  # the order metrics are listed in; absent, versions stored before it stand
        digest.update(f"|metric-order:{campaign.test_set.score_columns}".encode())
    for entry in campaign.entries.order_by("pk"):
        digest.update(
            f"|entry:{entry.pk}:{entry.content_hash}:{sorted(entry.objective_scores.items())}:{sorted(entry.computed_scores.items())}".encode()
        )
    ratings = Rating.objects.filter(campaign=campaign).order_by("entry_id", "instance", "question", "rater").values_list("entry_id", "instance", "question", "rater", "value")
    batch = []
    for row in ratings.iterator(chunk_size=20000):
        batch.append(row)
        if len(batch) == 20000:
            digest.update(repr(batch).encode())
            batch = []
    digest.update(repr(batch).encode())
    return digest.hexdigest()


def refresh_inputs_version(campaign: Campaign) -> str:
    campaign.inputs_version = inputs_version(campaign)
    campaign.save(update_fields=["inputs_version"])
    return campaign.inputs_version


def refresh_campaigns_of(entries) -> int:
    """Refresh the inputs version of every campaign rating one of `entries` (Entry rows or pks).

    Called by whatever changes an entry's outputs or objective scores (an import, `score_entries`):
    the stored results read them (each metric's Spearman correlation with the human ranking), so without this the
    page and the API kept calling results computed from the old scores current. Returns the number
    of campaigns refreshed."""
    campaigns = Campaign.objects.filter(entries__in=entries).distinct().select_related("test_set")
    refreshed = 0
    for campaign in campaigns:
        refresh_inputs_version(campaign)
        refreshed += 1
    return refreshed
