"""Queue the transcription of a spoken-reading response's readings once it is stored.

A receiver of `signals.response_submitted` (sent on commit), connected in `AnnotationConfig.ready`:
services never import tasks, so the queueing lives here.
"""
from . import task_types
from .models import SpokenReading
from .tasks import transcribe_reading


def transcribe_submitted(sender, response, **kwargs) -> None:
    """Queue one transcription per reading of a response whose type stores spoken readings."""
    if not isinstance(task_types.get(response.item.job.task_type), task_types.TakesUploads):
        return  # a type without files: no query
    for reading_id in SpokenReading.objects.filter(response=response).values_list("pk", flat=True):
        transcribe_reading.delay(reading_id)
