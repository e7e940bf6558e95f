"""What the job page shows of a large job, stored so that it reads a figure instead of every row
(issue 26): Response.work_seconds, each response's claim-to-submission time, averaged as a column
instead of a timestamp difference (on SQLite a Python function per row); and
JobFlagReport.responses_flagged, the number of flagged responses, without decoding their list."""
from django.db import migrations, models

import annotation.models

# One statement per database that Quorum runs on; the same difference in seconds.
FILL = {
    "postgresql": "UPDATE annotation_response SET work_seconds = EXTRACT(EPOCH FROM submitted_at - claimed_at)",
    # Django keeps SQLite timestamps as 'YYYY-MM-DD HH:MM:SS[.ffffff]' in UTC: whole seconds from
    # strftime of the text without its fraction (which it would round), the microseconds from the
    # text after them (julianday would round to milliseconds).
    "sqlite": (
        "UPDATE annotation_response SET work_seconds = (strftime('%s', substr(submitted_at, 1, 19)) - strftime('%s', substr(claimed_at, 1, 19)))"
        " + (CAST(substr(submitted_at, 20) AS REAL) - CAST(substr(claimed_at, 20) AS REAL))"
    ),
}


def fill_work_seconds(apps, schema_editor):
    statement = FILL.get(schema_editor.connection.vendor)
    if statement is not None:
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(statement)  # no parameters: '%s' is strftime's, not a placeholder
        return
    Response = apps.get_model("annotation", "Response")
    rows = Response.objects.values_list("pk", "claimed_at", "submitted_at")
    for pk, claimed, submitted in rows.iterator(chunk_size=2000):
        Response.objects.filter(pk=pk).update(work_seconds=(submitted - claimed).total_seconds())


def count_flagged_responses(apps, schema_editor):
    JobFlagReport = apps.get_model("annotation", "JobFlagReport")
    for report in JobFlagReport.objects.only("pk", "response_flags").iterator(chunk_size=20):
        JobFlagReport.objects.filter(pk=report.pk).update(responses_flagged=len(report.response_flags or {}))


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0017_export_out_of_domain"),
    ]

    operations = [
        migrations.AddField(
            model_name="response",
            name="work_seconds",
            field=annotation.models.WorkSecondsField(
                blank=True, editable=False, null=True,
                help_text="Seconds from the claim to the submission (submitted_at - claimed_at), stored when the response is written.",
            ),
        ),
        migrations.RunPython(fill_work_seconds, migrations.RunPython.noop),
        migrations.AddField(
            model_name="jobflagreport",
            name="responses_flagged",
            field=models.PositiveIntegerField(
                default=0, help_text="How many responses `response_flags` holds: the job page shows the number without reading them."
            ),
        ),
        migrations.RunPython(count_flagged_responses, migrations.RunPython.noop),
    ]
