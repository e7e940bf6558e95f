"""Shared helpers of the evaluation commands: lookups that fail with a CommandError that says what to do."""
from django.core.management.base import CommandError

from evaluation.campaigns.services.results_runs import compute_results_here
from evaluation.errors import EvaluationInputError
from evaluation.models import Campaign, TestSet


def get_campaign(name_or_id) -> Campaign:
    campaign = Campaign.objects.filter(name=name_or_id).select_related("test_set").first()
    if campaign is None and str(name_or_id).isdigit():
        campaign = Campaign.objects.filter(pk=int(name_or_id)).select_related("test_set").first()
    if campaign is None:
        raise CommandError(f"no campaign {name_or_id!r}; existing: {', '.join(Campaign.objects.values_list('name', flat=True)) or 'none'}")
    return campaign


def get_test_set(challenge, name) -> TestSet:
    test_set = TestSet.objects.filter(challenge__name=challenge, name=name).first()
    if test_set is None:
        raise CommandError(f"no test set {name!r} in challenge {challenge!r}; import it with import_testset")
    return test_set


def add_test_set_arguments(parser):
    parser.add_argument("--challenge", required=True, help="Challenge name, e.g. 'DSTC9 Track 1'.")
    parser.add_argument("--test-set", required=True, dest="test_set", help="Test set name, e.g. 'test'.")


def current_results(campaign):
    """The campaign's stored results for its current inputs, computed here first if needed (recorded
    as the page's computations are)."""
    try:
        return compute_results_here(campaign)
    except EvaluationInputError as exc:
        raise CommandError(str(exc)) from exc
