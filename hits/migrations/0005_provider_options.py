"""Provider options move from columns into the providers' own storage: MTurk's sandbox and Prolific's
fee rate into `provider_options` (by option name, as the providers' schemas declare them), MTurk's HIT
type id into `provider_state`. Reversible: the columns are written back from the JSON."""
from decimal import Decimal

from django.conf import settings
from django.db import migrations, models

HIT_TYPE = "hit_type_id"


def _default_fee_rate() -> Decimal:
    return Decimal(str(getattr(settings, "QUORUM_PROLIFIC_FEE_RATE", "0.3333")))


def columns_to_json(apps, schema_editor):
    JobCrowdConfig = apps.get_model("hits", "JobCrowdConfig")
    for config in JobCrowdConfig.objects.all().iterator():
        config.provider_options = {
            **(config.provider_options or {}), "sandbox": config.sandbox, "prolific_fee_rate": str(config.prolific_fee_rate),
        }
        config.provider_state = {HIT_TYPE: config.external_type_id} if config.external_type_id else {}
        config.save(update_fields=["provider_options", "provider_state"])


def json_to_columns(apps, schema_editor):
    JobCrowdConfig = apps.get_model("hits", "JobCrowdConfig")
    for config in JobCrowdConfig.objects.all().iterator():
        options = config.provider_options or {}
        config.sandbox = bool(options.get("sandbox", True))
        config.prolific_fee_rate = Decimal(str(options.get("prolific_fee_rate", _default_fee_rate())))
        config.external_type_id = (config.provider_state or {}).get(HIT_TYPE, "")
        config.save(update_fields=["sandbox", "prolific_fee_rate", "external_type_id"])


class Migration(migrations.Migration):

    dependencies = [
        ("hits", "0004_provider_events"),
    ]

    operations = [
        migrations.AddField(
            model_name="jobcrowdconfig",
            name="provider_options",
            field=models.JSONField(
                blank=True, default=dict,
                help_text="The providers' own settings of this job by option name, as their schemas declare them "
                "(hits/providers/<provider>/options.py); written only by hits.services.config.",
            ),
        ),
        migrations.AddField(
            model_name="jobcrowdconfig",
            name="provider_state",
            field=models.JSONField(
                blank=True, default=dict,
                help_text="What the provider keeps for the job once made (e.g. its listing type); emptied when the "
                "requirements or options change.",
            ),
        ),
        migrations.RunPython(columns_to_json, json_to_columns),
        migrations.RemoveField(model_name="jobcrowdconfig", name="external_type_id"),
        migrations.RemoveField(model_name="jobcrowdconfig", name="prolific_fee_rate"),
        migrations.RemoveField(model_name="jobcrowdconfig", name="sandbox"),
        migrations.AlterField(
            model_name="jobcrowdconfig",
            name="requirements",
            field=models.JSONField(
                blank=True, default=dict,
                help_text="Worker requirements: the shared keys of hits.policy.requirements and each provider's requirement "
                "options (hits/providers/<provider>/options.py).",
            ),
        ),
    ]
