"""What the API fuzzing found, held one request at a time: each was a 500 (or a value that broke
every later page) and is now a 4xx with its reason, or a clamped answer."""
import pytest
from django.db import IntegrityError, transaction
from rest_framework.test import APIClient

from annotation.models import Job, QualityPolicy
from annotation.services.jobs import create_job
from annotation.services.quality import QualityError, set_quality
from annotation.services.voting import vote_job_of
from annotation.web.organizer_forms import QualitySettingsForm
from hits.policy.requirements import RequirementsError, clean
from tests.factories import make_corpus

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(organizer_api):
    return organizer_api


@pytest.fixture
def job():
    return create_job(corpus=make_corpus(), name="job", redundancy=1)


@pytest.mark.parametrize("requirements", [True, 3, ["US"], "US"])
def test_crowd_requirements_that_are_not_an_object_are_a_400(api, job, requirements):
    response = api.put(f"/api/crowd/jobs/{job.pk}/", {"provider": "mturk", "requirements": requirements}, format="json")
    assert response.status_code == 400, response.content
    assert "requirements" in response.json()
    with pytest.raises(RequirementsError, match="requirements: an object"):
        clean(requirements, known_keys=())


def test_pattern_min_ratings_of_zero_is_refused_by_the_api_the_form_the_service_and_the_database(api, job):
    response = api.post(f"/api/jobs/{job.pk}/quality/", {"pattern_min_ratings": 0}, format="json")
    assert response.status_code == 400 and "pattern_min_ratings" in response.json()
    assert not QualitySettingsForm(data={"pattern_min_ratings": 0}).is_valid()
    assert "pattern_min_ratings" in QualitySettingsForm(data={"pattern_min_ratings": 0}).errors
    with pytest.raises(QualityError, match="pattern_min_ratings must be a whole number from 1 to 10000"):
        set_quality(job, pattern_min_ratings=0)
    with pytest.raises(IntegrityError), transaction.atomic():
        QualityPolicy.objects.create(job=job, pattern_min_ratings=0)
    assert api.post(f"/api/jobs/{job.pk}/quality/", {"pattern_min_ratings": 1}, format="json").status_code == 200


@pytest.mark.parametrize("query", ["limit=99999999999999999999", "offset=99999999999999999999", "limit=99999999999999999999&offset=99999999999999999999"])
@pytest.mark.parametrize("path", ["/api/jobs/", "/api/corpora/", "/api/imports/", "/api/exports/"])
def test_huge_limits_and_offsets_are_clamped(api, job, path, query):
    response = api.get(f"{path}?{query}")
    assert response.status_code == 200, response.content
    body = response.json()
    assert isinstance(body["results"], list)
    if "offset" in query:
        assert body["results"] == []  # past the end of any table
    elif path == "/api/jobs/":
        assert [row["id"] for row in body["results"]] == [job.pk]


def test_an_unknown_api_address_is_a_json_404_and_a_missing_slash_a_redirect_that_keeps_the_method(api, settings):
    missing = api.post("/api/workers/-3/unblock/", {"job": 1}, format="json")
    assert missing.status_code == 404 and "No such API address" in missing.json()["detail"]
    assert api.get("/api/nothing/here/").status_code == 404
    spoilt = api.get("/api/campaigns/%0A%C3%B5/results/")  # a newline in the id: JSON too (schemathesis)
    assert spoilt.status_code == 404 and spoilt["Content-Type"] == "application/json"
    redirect = api.get("/api/jobs")
    assert redirect.status_code == 308 and redirect["Location"].endswith("/api/jobs/")
    # A 301 is followed as a GET: a POST without its slash would list the jobs and create nothing.
    for debug in (False, True):  # under DEBUG Django itself would raise
        settings.DEBUG = debug
        posted = api.post("/api/jobs", {"name": "x"}, format="json")
        assert posted.status_code == 308 and posted["Location"].endswith("/api/jobs/")
        page = api.post("/organize/jobs/new", {"name": "x"})  # a page's address too (quorum.slashes)
        assert page.status_code == 308 and page["Location"] == "/organize/jobs/new/"


def test_the_token_endpoint_documents_its_refusal(api, organizer):
    refused = APIClient().post("/api/token/", {"username": "olga", "password": "wrong"}, format="json")
    assert refused.status_code == 400
    schema = api.get("/api/schema/?format=json").json()
    assert set(schema["paths"]["/api/token/"]["post"]["responses"]) == {"200", "400", "415", "429"}  # 429: too many failed attempts (issue 25)
    unsupported = APIClient().post("/api/token/", b"x", content_type="text/plain")
    assert unsupported.status_code == 415 and "Unsupported media type" in unsupported.json()["detail"]
    assert "400" in schema["paths"]["/api/jobs/"]["get"]["responses"]  # a bad limit or offset
    crowd = schema["paths"]["/api/crowd/jobs/{id}/"]
    assert {"400", "404"} <= set(crowd["put"]["responses"])
    assert Job.objects.count() == 0


def test_the_schema_documents_background_runs_and_the_conflict_of_one_under_way(api):
    paths = api.get("/api/schema/?format=json").json()["paths"]
    human_evals = paths["/api/evaluation/campaigns/{id}/human-evals/"]["post"]["responses"]
    assert {"202", "400", "404"} <= set(human_evals) and "200" not in human_evals
    assert "Location" in human_evals["202"]["headers"]
    assert human_evals["202"]["content"]["application/json"]["schema"]["$ref"].endswith("/CampaignRun")
    assert set(paths["/api/evaluation/campaigns/{id}/runs/{run_pk}/"]["get"]["responses"]) == {"200", "400", "404"}  # 400: a query parameter it does not take
    conflict = paths["/api/jobs/{id}/exports/"]["post"]["responses"]["409"]
    assert conflict["content"]["application/json"]["schema"]["$ref"].endswith("/RunUnderWay")
    runs = paths["/api/evaluation/campaigns/{id}/runs/"]["get"]
    assert runs["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].endswith("/PaginatedCampaignRunList")
    assert {"limit", "offset"} <= {p["name"] for p in runs["parameters"]} and {"200", "400", "404"} <= set(runs["responses"])


def test_every_202_in_the_schema_documents_the_location_to_follow(api):
    """A client of a 202 learns where to follow the work from the Location header, never by guessing a URL."""
    accepted = {
        (method, path): operation["responses"]["202"]
        for method, path, operation in _operations(api.get("/api/schema/?format=json").json())
        if "202" in operation["responses"]
    }
    assert {("post", "/api/corpora/"), ("post", "/api/jobs/{id}/exports/"), ("post", "/api/crowd/jobs/{id}/reconcile/"),
            ("post", "/api/evaluation/pairwise/{id}/"), ("post", "/api/evaluation/test-sets/{id}/scoring/")} <= set(accepted)
    for (method, path), response in accepted.items():
        header = response.get("headers", {}).get("Location")
        assert header and header["schema"] == {"type": "string", "format": "uri"} and header["description"], (method, path)


@pytest.mark.parametrize(
    "method, path, body, unknown, accepted",
    [
        ("put", "/api/crowd/jobs/{job}/", {"provider": "mturk", "budgett": "5.00"}, "budgett", "budget"),
        ("post", "/api/jobs/{job}/quality/", {"gold_min_answerd": 3}, "gold_min_answerd", "flags_reject"),
        ("post", "/api/crowd/jobs/{job}/bonus/", {"bonuses": [{"assignment": 1, "amount": "1.00", "reason": "x", "note": "x"}]}, "note", "reason"),
        ("post", "/api/jobs/", {"name": "x", "corpus": 1, "task_type": "rewrite", "redundnacy": 3}, "redundnacy", "redundancy"),
    ],
)
def test_an_unknown_field_in_a_body_is_a_400_naming_it_and_the_accepted_fields(api, job, method, path, body, unknown, accepted):
    """DRF drops undeclared keys; a misspelt one would leave the default in place without a word."""
    before = Job.objects.count(), QualityPolicy.objects.count()
    response = getattr(api, method)(path.format(job=job.pk), body, format="json")
    assert response.status_code == 400, response.content
    text = response.content.decode()
    assert f'"{unknown}"' in text and "Unknown field; the accepted fields are" in text and accepted in text
    assert (Job.objects.count(), QualityPolicy.objects.count()) == before


def test_a_blank_form_value_is_refused_not_taken_as_left_out(api, job):
    """Found by the API fuzz test: DRF reads `provider=` in a form body as no provider given, so the
    request was answered 200 and changed nothing of it; in JSON the same request is a 400."""
    url = f"/api/crowd/jobs/{job.pk}/"
    for body in ("provider=", "provider=prolific&minutes_per_assignment=", "budget=&auto_approval_days="):
        response = api.put(url, body, content_type="application/x-www-form-urlencoded")
        assert response.status_code == 400, (body, response.content)
        blank = [name for name in ("provider", "minutes_per_assignment", "auto_approval_days") if f"{name}=&" in body + "&"]
        assert set(response.json()) == set(blank) and "leave the field out, or give a value" in response.content.decode()
    assert api.put(url, {"provider": ""}, format="json").status_code == 400  # as in JSON
    # A blank where the field takes null (no budget) or a blank text still means that.
    assert api.put(url, "provider=inhouse&budget=&title=", content_type="application/x-www-form-urlencoded").status_code == 200


def test_the_schema_and_its_docs_are_public_by_default_and_organizer_only_by_setting(api, settings, make_annotator):
    anonymous, annotator = APIClient(), APIClient()
    annotator.force_authenticate(make_annotator("ann")[0])
    for path in ("/api/schema/", "/api/docs/"):
        assert anonymous.get(path).status_code == 200
    settings.QUORUM_API_SCHEMA_PUBLIC = False
    for path in ("/api/schema/", "/api/docs/"):
        assert anonymous.get(path).status_code in (401, 403)
        assert annotator.get(path).status_code == 403
        assert api.get(path).status_code == 200


@pytest.mark.parametrize("query", ["limit=-1", "limit=0", "limit=2.5", "limit=abc", "offset=-1", "offset=1e3", "limit=%EF%BC%91"])
def test_a_limit_or_offset_that_is_not_a_whole_number_in_range_is_a_400_naming_it(api, job, query):
    """DRF would quietly use its default page instead (schemathesis's negative run found this)."""
    response = api.get(f"/api/jobs/?{query}")
    assert response.status_code == 400, response.content
    name = query.split("=")[0]
    assert list(response.json()) == [name] and "give a whole number from" in response.json()[name][0]
    assert api.get("/api/jobs/?limit=1&offset=0").status_code == 200


def test_the_review_list_takes_all_as_true_or_false_only(api, job):
    assert api.get(f"/api/jobs/{job.pk}/reviews/?all=true").status_code == 200
    assert api.get(f"/api/jobs/{job.pk}/reviews/?all=false").status_code == 200
    refused = api.get(f"/api/jobs/{job.pk}/reviews/?all=7")
    assert refused.status_code == 400 and "give true or false" in refused.json()["all"][0]


def test_a_multipart_body_with_no_part_is_a_400_and_an_empty_body_still_means_no_fields(api, job):
    """Found by schemathesis's negative run: `None` sent as a multipart body read as an empty form,
    and an operation whose fields are all optional went ahead with its defaults."""
    garbage = b"None--7c5156fb--\r\n"
    response = api.generic("POST", f"/api/jobs/{job.pk}/voting/", garbage, content_type="multipart/form-data; boundary=7c5156fb")
    assert response.status_code == 400 and "holds no part" in response.json()["detail"]
    assert vote_job_of(job) is None  # voting was not switched on with its defaults
    assert api.generic("POST", f"/api/jobs/{job.pk}/voting/", b"", content_type="multipart/form-data; boundary=x").status_code == 200
    assert vote_job_of(job) is not None


def _operations(schema):
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if method in ("get", "post", "put", "patch", "delete"):
                yield method, path, operation


def test_every_operation_on_an_object_answers_a_missing_one_with_a_documented_404(api):
    """Issue 25 (b): an id (or file name) that does not exist is a 404 with a reason, and the
    schema says so for every operation that takes one (the finalists' was undocumented)."""
    schema = api.get("/api/schema/?format=json").json()
    tried = 0
    for method, path, operation in _operations(schema):
        names = [p["name"] for p in operation.get("parameters", []) if p["in"] == "path"]
        if not names:
            continue
        url = path
        for name in names:
            url = url.replace(f"{{{name}}}", "987654321" if name in ("id", "pk") else "no-such-file.csv")
        answer = getattr(api, method)(url, {}, format="json")
        assert answer.status_code == 404, (method, path, answer.status_code)
        assert answer.json().get("detail"), (method, path)
        assert "404" in operation["responses"], f"{method.upper()} {path} does not document its 404"
        tried += 1
    assert tried >= 40  # every operation on a job, corpus, campaign, test set, export, worker...


def test_the_systems_list_documents_a_paginated_list_and_registration_its_201(api):
    """Issue 25 (b): GET /api/evaluation/systems/ was documented as one system, with 201 and 400."""
    systems = api.get("/api/schema/?format=json").json()["paths"]["/api/evaluation/systems/"]
    assert set(systems["get"]["responses"]) == {"200", "400"}  # 400: a bad limit or offset
    listed = systems["get"]["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    assert listed.endswith("/PaginatedDialogSystemList")
    assert set(systems["post"]["responses"]) == {"201", "400", "415", "429"}
    assert api.get("/api/evaluation/systems/?limit=5").json() == {"count": 0, "next": None, "previous": None, "results": []}


def test_the_api_docs_describe_bodies_to_their_readers_not_to_developers(api):
    """A serializer without a docstring of its own took the mixin's ("Mix in before serializers.Serializer...")."""
    schema = api.get("/api/schema/?format=json").json()
    described = {name: body.get("description", "") for name, body in schema["components"]["schemas"].items()}
    assert not {name: text for name, text in described.items() if "serializers." in text or "Mix in" in text}
    assert described["JobCreate"].startswith("A draft job")


def test_a_token_is_taken_with_the_token_or_the_bearer_scheme(organizer):
    """Most HTTP clients send a token as Bearer; DRF alone said "credentials were not provided"."""
    from rest_framework.authtoken.models import Token

    key = Token.objects.create(user=organizer).key
    for scheme in ("Token", "Bearer", "bearer"):
        assert APIClient().get("/api/jobs/", HTTP_AUTHORIZATION=f"{scheme} {key}").status_code == 200, scheme
    wrong = APIClient().get("/api/jobs/", HTTP_AUTHORIZATION="Bearer not-a-token")
    assert wrong.status_code == 401 and wrong.json()["detail"] == "Invalid token."
    spaced = APIClient().get("/api/jobs/", HTTP_AUTHORIZATION=f"Bearer {key} extra")
    assert spaced.status_code == 401 and "give the token after Bearer" in spaced.json()["detail"]
    assert APIClient().get("/api/jobs/").status_code == 401  # and none at all is still refused
