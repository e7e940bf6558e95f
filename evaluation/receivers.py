"""Receivers of annotation signals: a submitted Likert response of a campaign's crowd job becomes
Rating rows. Connected in EvaluationConfig.ready(); annotation never imports evaluation."""
from django.dispatch import receiver

from annotation.signals import response_submitted


@receiver(response_submitted, dispatch_uid="evaluation.ratings_from_response")
def ratings_from_response(sender, response, **kwargs):
    from .services.crowd import record_response_ratings

    if response.item.job.task_type != "likert":
        return  # only campaign (Likert) jobs produce ratings; skip the lookup for every other job
    record_response_ratings(response)
