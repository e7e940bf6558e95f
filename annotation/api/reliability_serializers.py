"""The API's view of the stored reliability model (issue 22): one row per worker and role."""
from rest_framework import serializers


class WorkerReliabilitySerializer(serializers.Serializer):
    """A worker's reliability in a job as the last flag run fitted it (Dawid-Skene over the job's
    categorical answers, and over the votes on its responses)."""

    worker = serializers.CharField(help_text="provider:id, as in responses.csv.")
    role = serializers.ChoiceField(choices=["rater", "voter", "writer"], help_text="What the numbers judge: the worker's answers (rater), votes (voter), or voted responses (writer).")
    job_id = serializers.IntegerField(help_text="The job whose model it is (the vote job for voters and writers).")
    answers = serializers.IntegerField(help_text="Answers judged (a writer: voted parts).")
    accuracy = serializers.FloatField(help_text="Expected share of answers that are right (a writer: of voted parts judged usable).")
    accuracy_low = serializers.FloatField(help_text="Lower end of its 95% interval.")
    accuracy_high = serializers.FloatField(help_text="Upper end of its 95% interval.")
    spammer_score = serializers.FloatField(allow_null=True, help_text="0: answers unrelated to the item; 1: perfect; null for writers.")
    spammer_low = serializers.FloatField(allow_null=True, help_text="Lower end of its 95% interval.")
    spammer_high = serializers.FloatField(allow_null=True, help_text="Upper end of its 95% interval.")
    fitted_at = serializers.CharField(help_text="When the flag run that fitted the model started (ISO 8601).")
