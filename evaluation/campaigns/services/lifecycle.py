"""A campaign's name and its removal: renamed at any time, deleted while nothing depends on it.

What depends on a campaign: its ratings (imported or collected: people's work), its crowd job (with
its responses, postings and payments), and automatic judges' scores imported into it. A campaign
with any of them is not deleted; the refusal names each one and what to do instead. Results and
looks are derived from the ratings, so a campaign without ratings has none worth keeping.
"""
from __future__ import annotations

from django.db import transaction

from evaluation.errors import EvaluationInputError
from evaluation.models import Campaign, CampaignJob, JudgeRun, Rating

NAME_MAX: int = Campaign._meta.get_field("name").max_length or 200


@transaction.atomic
def rename_campaign(campaign: Campaign, name: str) -> Campaign:
    """Give the campaign a new name (unique, not blank); its ratings, results and files stay."""
    name = " ".join((name or "").split())
    if not name:
        raise EvaluationInputError("give the campaign a name")
    if len(name) > NAME_MAX:
        raise EvaluationInputError(f"a campaign's name has at most {NAME_MAX} characters; this one has {len(name)}")
    campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
    if Campaign.objects.filter(name=name).exclude(pk=campaign.pk).exists():
        raise EvaluationInputError(f"another campaign is called {name!r}; choose another name")
    campaign.name = name
    campaign.save(update_fields=["name"])
    return campaign


def dependents(campaign: Campaign) -> list[str]:
    """What keeps the campaign from being deleted, each with what to do; empty when nothing does."""
    found = []
    crowd = CampaignJob.objects.select_related("job").filter(campaign=campaign).first()
    if crowd is not None:
        found.append(
            f"its crowd job “{crowd.job.name}” ({crowd.job.get_state_display().lower()}) holds the raters' responses and "
            "any crowd postings and payments: keep the campaign (rename it if its name is in the way)"
        )
    ratings = Rating.objects.filter(campaign=campaign).count()
    if ratings and crowd is None:
        found.append(
            f"{ratings} imported rating{'s' if ratings != 1 else ''} belong to it: keep the campaign, or rename it and "
            "import the ratings again into a new one"
        )
    judges = list(JudgeRun.objects.filter(campaign=campaign).order_by("name").values_list("name", flat=True))
    if judges:
        named = ", ".join(f"“{n}”" for n in judges)
        found.append(f"automatic judge scores ({named}) were imported into it: keep the campaign, or rename it")
    return found


@transaction.atomic
def delete_campaign(campaign: Campaign) -> str:
    """Delete a campaign nothing depends on (with its derived results and looks); returns its name.
    Refused, naming each dependent and what to do, otherwise."""
    campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
    found = dependents(campaign)
    if found:
        raise EvaluationInputError(f"campaign {campaign.name!r}: " + "; ".join(found))
    name = campaign.name
    campaign.delete()
    return name
