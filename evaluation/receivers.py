"""Receivers of annotation signals: evaluation's ratings follow the life of campaign responses.

A response of a campaign's rating job that starts to count becomes Rating rows; one that stops
counting (rejected, excluded, held, unconfirmed) takes its ratings out, in the same transaction as
the move, so the campaign page, `compute_results` and the API always read the same ratings.
An adaptive campaign's look is queued (after commit) when one of its ratings is recorded, a pairwise
job's ranking report when one of its votes starts or stops counting. A chat
that starts to count goes through the offensive-word filter in the same transaction, so it never
counts on the interactive leaderboard before a flag is raised.
Connected in EvaluationConfig.ready(); annotation never imports evaluation.
"""
import logging

from django.dispatch import receiver

from annotation import task_types
from annotation.models import Response
from annotation.signals import response_status_changed
from evaluation.campaigns.services.adaptive import look_after_rating
from evaluation.campaigns.services.crowd import record_response_ratings, remove_response_ratings
from evaluation.campaigns.services.pairwise import request_report
from evaluation.errors import EvaluationInputError
from evaluation.interactive.services.screening import screen_chat_response

logger = logging.getLogger(__name__)


@receiver(response_status_changed, dispatch_uid="evaluation.ratings_follow_response")
def ratings_follow_response(sender, response, from_status, to_status, **kwargs):
    counted_before, counted_now = from_status in Response.COUNTED, to_status in Response.COUNTED
    if counted_before == counted_now:
        return
    if not isinstance(task_types.get(response.item.job.task_type), task_types.FeedsRatings):
        return  # only rating types feed evaluation; skip the campaign lookup for every other job
    if counted_now:
        campaign = record_response_ratings(response)
        if campaign is not None:
            look_after_rating(campaign)  # an adaptive campaign's round may now be complete
    else:
        remove_response_ratings(response)


@receiver(response_status_changed, dispatch_uid="evaluation.pairwise_report_follows_votes")
def pairwise_report_follows_votes(sender, response, from_status, to_status, **kwargs):
    """A vote that starts or stops counting asks for the job's stored ranking report again (debounced)."""
    if (from_status in Response.COUNTED) == (to_status in Response.COUNTED) or response.item.gold is not None:
        return  # gold answers are not votes (`selectors.pairwise_records`)
    job = response.item.job
    if isinstance(task_types.get(job.task_type), task_types.ComparesSystems):
        request_report(job)


def _relays_chat(job) -> bool:
    return isinstance(task_types.get(job.task_type), task_types.RelaysChat)


@receiver(response_status_changed, dispatch_uid="evaluation.chats_screened_when_counted")
def chats_screened_when_counted(sender, response, from_status, to_status, **kwargs):
    if to_status in Response.COUNTED and from_status not in Response.COUNTED and _relays_chat(response.item.job):
        try:
            screen_chat_response(response)
        except EvaluationInputError as exc:
            # A broken word list must not fail the worker's submission; the organizer's "screen
            # again" on the results page shows the error and screens these chats once it is fixed.
            logger.warning("chat response %s was not screened: %s", response.pk, exc)
