"""Receivers of annotation signals: evaluation's ratings follow the life of campaign responses.

A response of a campaign's rating job that starts to count becomes Rating rows; one that stops
counting (rejected, excluded, held, unconfirmed) takes its ratings out, in the same transaction as
the move, so the campaign page, `compute_results` and the API always read the same ratings.
An adaptive campaign's look is queued (after commit) when one of its ratings is recorded.
Connected in EvaluationConfig.ready(); annotation never imports evaluation.
"""
from django.dispatch import receiver

from annotation import task_types
from annotation.models import Response
from annotation.signals import response_status_changed

from .adaptive_requests import look_after_rating
from .services.crowd import record_response_ratings, remove_response_ratings


@receiver(response_status_changed, dispatch_uid="evaluation.ratings_follow_response")
def ratings_follow_response(sender, response, from_status, to_status, **kwargs):
    counted_before, counted_now = from_status in Response.COUNTED, to_status in Response.COUNTED
    if counted_before == counted_now:
        return
    if not task_types.get(response.item.job.task_type).feeds_evaluation:
        return  # only rating types feed evaluation; skip the campaign lookup for every other job
    if counted_now:
        if record_response_ratings(response):
            look_after_rating(response)  # an adaptive campaign's round may now be complete
    else:
        remove_response_ratings(response)
