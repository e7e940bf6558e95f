"""What the campaigns add to annotation's job page (`annotation.extensions.job_links`): a pairwise
job's ranking, which this app keeps."""
from django.urls import reverse

from annotation import task_types


def pairwise_ranking_link(job) -> tuple[str, str] | None:
    """(url, text) of the ranking of a job whose task type compares systems; None for any other job."""
    if task_types.capability(task_types.get(job.task_type), task_types.ComparesSystems) is None:
        return None
    return reverse("evaluation:pairwise-ranking", kwargs={"pk": job.pk}), "Ranking: the systems ranked from these comparisons"
