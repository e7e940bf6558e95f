"""Provider options as schemas: the one check, stored and typed values, the form and the migration
that moved the old columns into the providers' storage."""
from decimal import Decimal as D

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from hits import providers
from hits.providers.options import Kind, Option, OptionsError, cleaned, read
from hits.web.forms import CrowdSettingsForm


def test_a_value_of_the_wrong_type_or_range_says_what_to_give():
    rate = Option("rate", Kind.DECIMAL, "h", default=D("0.3"), minimum=D("0"), maximum=D("1"), places=4)
    assert rate.problem("0.4286") is None and rate.problem(D("1")) is None
    assert rate.problem("x") == rate.problem(True) == rate.problem("2") == "a number from 0 to 1"
    assert rate.problem("0.12345") == "a number with at most 4 digits after the point"
    share = Option("share", Kind.WHOLE, "h", minimum=0, maximum=100, requirement=True)
    assert share.problem(None) is None and share.problem(True) == "a whole number from 0 to 100, or leave it out"
    switch = Option("switch", Kind.SWITCH, "h", default=True)
    assert switch.problem(None) == "a value is needed" and switch.problem("yes") == "true or false"


def test_settings_are_stored_as_json_and_read_typed_with_defaults():
    schema = (
        Option("rate", Kind.DECIMAL, "h", default=lambda: D("0.3333"), minimum=D("0")),
        Option("switch", Kind.SWITCH, "h", default=True),
        Option("keys", Kind.CODES, "h", requirement=True),
    )
    stored = cleaned(schema, {"rate": "0.5"}, {"other": 1})
    assert stored == {"other": 1, "rate": "0.5", "switch": True}  # requirements are not settings
    assert read(schema, stored) == {"rate": D("0.5"), "switch": True}
    assert read(schema, {}) == {"rate": D("0.3333"), "switch": True}
    with pytest.raises(OptionsError) as refused:
        cleaned(schema, {"rate": "-1", "switch": "no"}, {})
    assert set(refused.value.errors) == {"rate", "switch"}


def test_the_deployment_fee_rate_is_the_default_of_a_new_job(settings):
    settings.QUORUM_PROLIFIC_FEE_RATE = "0.25"
    assert providers.clean_settings({}, {})["prolific_fee_rate"] == "0.25"
    assert providers.clean_settings({}, {"prolific_fee_rate": "0.4"})["prolific_fee_rate"] == "0.4"  # a job keeps its own


def test_the_form_has_a_field_for_every_option_shown_on_it_with_its_help():
    form = CrowdSettingsForm()
    for name, option in providers.all_options().items():
        assert (name in form.fields) == option.on_form
        if option.on_form:
            assert form.fields[name].help_text.startswith(option.help) and not form.fields[name].required


@pytest.mark.django_db(transaction=True)
def test_the_migration_moves_the_columns_into_provider_storage_and_back(job_factory):
    job = job_factory()
    before, after = [("hits", "0004_provider_events")], [("hits", "0005_provider_options")]
    executor = MigrationExecutor(connection)
    try:
        executor.migrate(before)
        old = executor.loader.project_state(before).apps.get_model("hits", "JobCrowdConfig")
        old.objects.create(job_id=job.pk, provider="mturk", sandbox=False, prolific_fee_rate=D("0.4286"), external_type_id="3TYPE")
        executor = MigrationExecutor(connection)
        executor.migrate(after)
        new = executor.loader.project_state(after).apps.get_model("hits", "JobCrowdConfig").objects.get(job_id=job.pk)
        assert new.provider_options == {"sandbox": False, "prolific_fee_rate": "0.4286"}
        assert new.provider_state == {"hit_type_id": "3TYPE"}
        executor = MigrationExecutor(connection)
        executor.migrate(before)
        back = executor.loader.project_state(before).apps.get_model("hits", "JobCrowdConfig").objects.get(job_id=job.pk)
        assert (back.sandbox, back.prolific_fee_rate, back.external_type_id) == (False, D("0.4286"), "3TYPE")
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())


def test_a_requirement_may_be_left_out_and_is_then_not_asked_for():
    req = providers.clean_requirements("mturk", {"min_approval_rate": None, "locales": ["US"]})
    assert req["min_approval_rate"] is None  # as before: null asks nothing, the default does not come back
    with pytest.raises(Exception, match="a whole number from 0 to 100, or leave it out"):
        providers.clean_requirements("mturk", {"min_approval_rate": 101})
