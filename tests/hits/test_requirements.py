import botocore.session
import pytest
from botocore.validate import ParamValidator

from hits import providers
from hits.policy import requirements
from hits.providers.mturk.requirements import qualification_requirements
from hits.providers.prolific.requirements import filters as prolific_filters


def _validate_against_service_model(quals):
    model = botocore.session.get_session().get_service_model("mturk")
    shape = model.operation_model("CreateHITType").input_shape
    report = ParamValidator().validate(
        {"AssignmentDurationInSeconds": 600, "Reward": "0.50", "Title": "t", "Description": "d", "QualificationRequirements": quals},
        shape,
    )
    assert not report.has_errors(), report.generate_report()


def test_mturk_defaults_are_raddles():
    req = providers.clean_requirements("mturk", {})
    quals = qualification_requirements(req)
    assert {"QualificationTypeId": "00000000000000000071", "Comparator": "EqualTo", "LocaleValues": [{"Country": "US"}]} in quals
    assert {
        "QualificationTypeId": "000000000000000000L0", "Comparator": "GreaterThanOrEqualTo", "IntegerValues": [90]
    } in quals
    assert not any(q["QualificationTypeId"] == "00000000000000000040" for q in quals)
    _validate_against_service_model(quals)


def test_optional_and_custom_requirements():
    req = providers.clean_requirements(
        "mturk",
        {
            "locales": ["US", "GB"],
            "min_hits_approved": 500,
            "qualifications": [{"id": "3CUSTOMQUAL", "comparator": "GreaterThan", "values": [2]}],
            "allow_qualification_id": "3ALLOWQUAL",
            "allow_list": ["A1WORKER"],
            "block_qualification_id": "3BLOCKQUAL",
        },
    )
    quals = qualification_requirements(req)
    ids = {q["QualificationTypeId"]: q for q in quals}
    assert ids["00000000000000000071"]["Comparator"] == "In"
    assert ids["00000000000000000040"]["IntegerValues"] == [500]
    assert ids["3CUSTOMQUAL"]["IntegerValues"] == [2]
    assert ids["3ALLOWQUAL"]["Comparator"] == "Exists"
    assert ids["3BLOCKQUAL"]["Comparator"] == "DoesNotExist"
    _validate_against_service_model(quals)


def test_bad_requirements_say_what_to_fix():
    with pytest.raises(requirements.RequirementsError) as err:
        providers.clean_requirements("mturk", {"min_approval_rate": 120, "locales": ["USA"], "colour": "blue"})
    assert set(err.value.errors) == {"min_approval_rate", "locales", "keys"}
    with pytest.raises(requirements.RequirementsError, match="allow_qualification_id"):
        providers.clean_requirements("mturk", {"allow_list": ["A1"]})


def test_prolific_filters_get_allow_and_block_lists():
    req = providers.clean_requirements(
        "prolific", {"prolific_filters": [{"filter_id": "first-language", "selected_values": ["english"]}], "allow_list": ["p1"]}
    )
    filters = prolific_filters(req, blocked_ids=["p9"])
    assert {"filter_id": "custom_allowlist", "selected_values": ["p1"]} in filters
    assert {"filter_id": "custom_blocklist", "selected_values": ["p9"]} in filters
    assert filters[0]["filter_id"] == "first-language"
