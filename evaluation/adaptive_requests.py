"""Queue an adaptive campaign's look (`services.adaptive.run_look`) as a task once the current
transaction commits: when one of its rating responses starts to count, and from the beat sweep.
Here, not in the services, so the task module can import the services without them importing it."""
from django.db import transaction

from .models import Campaign
from .tasks import run_adaptive_look


def request_look(campaign_id: int) -> None:
    transaction.on_commit(lambda: run_adaptive_look.delay(campaign_id))


def look_after_rating(response) -> None:
    """A rating of an adaptive campaign was recorded: its round may be complete. One query; the
    task decides under the campaign's lock, so many requests for one round add it once."""
    campaign_id = Campaign.objects.filter(adaptive=True, crowd_items__item_id=response.item_id).values_list("pk", flat=True).first()
    if campaign_id is not None:
        request_look(campaign_id)
