"""Reads on the annotation loop's path: which provider a job runs on, cached."""
from django.conf import settings
from django.core.cache import cache

from ..models import JobCrowdConfig


def provider_cache_key(job_id: int) -> str:
    return f"hits:job-provider:{job_id}"


def provider_of_job(job_id: int) -> str:
    """The provider key of a job's crowd settings, "" when it has none. Read on every claim, so cached
    (one query on a miss); `configure_crowd` forgets it when the settings change."""
    key = provider_cache_key(job_id)
    value = cache.get(key)
    if value is None:
        value = JobCrowdConfig.objects.filter(job_id=job_id).values_list("provider", flat=True).first() or ""
        cache.set(key, value, int(getattr(settings, "QUORUM_JOB_PROVIDER_CACHE_SECONDS", 300)))
    return value
