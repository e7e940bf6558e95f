"""An organizer's request for a campaign's results (from its page or the API), queued as a task.

The computation runs in `evaluation.tasks.compute_campaign_results`; queuing it lives here, not in
the services, so the task module can import the services without them importing it back.
"""
from django.db import transaction

from .models import Campaign
from .tasks import compute_campaign_results


def request_campaign_results(campaign: Campaign) -> None:
    """Enqueue the computation of the campaign's results once the current transaction commits."""
    transaction.on_commit(lambda: compute_campaign_results.delay(campaign.pk))
