"""What the interactive evaluation adds to annotation's job page (`annotation.extensions.job_links`)."""
from django.urls import reverse

from annotation import task_types


def interactive_results_link(job) -> tuple[str, str] | None:
    """(url, text) of a chat job's leaderboard; None for a job whose type relays no chat."""
    if task_types.capability(task_types.get(job.task_type), task_types.RelaysChat) is None:
        return None
    return reverse("evaluation:interactive-results", kwargs={"pk": job.pk}), "Results: the systems' leaderboard from these chats"
