"""A query parameter an API endpoint does not take is a 400 that names it, not silently ignored
(quorum/api/query.py); what an endpoint takes is what the API schema documents for it."""
import re

import pytest
import yaml
from django.core.management import call_command
from django.urls import URLPattern, URLResolver, get_resolver, resolve
from rest_framework.test import APIRequestFactory

from annotation.models import Job
from annotation.services.jobs import create_job
from quorum.api.query import RefusesUnknownQueryParameters, accepted_query_parameters
from tests.factories import make_corpus, make_live_job

#: drf-spectacular's own pages (the schema takes ?format= and ?lang=, the docs page none of ours).
SCHEMA_VIEWS = {"SpectacularAPIView", "SpectacularSwaggerSplitView"}


def _api_views(patterns=None, prefix=""):
    for entry in (get_resolver().url_patterns if patterns is None else patterns):
        if isinstance(entry, URLResolver):
            yield from _api_views(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern) and prefix.startswith("api/") and hasattr(entry.callback, "cls"):
            yield prefix + str(entry.pattern), entry.callback.cls


def test_every_api_view_refuses_query_parameters_it_does_not_take():
    views = list(_api_views())
    assert len(views) > 40  # the walk found the API
    missing = sorted({f"{route} {cls.__name__}" for route, cls in views
                      if cls.__name__ not in SCHEMA_VIEWS and not issubclass(cls, RefusesUnknownQueryParameters)})
    assert missing == []


@pytest.fixture(scope="module")
def schema(tmp_path_factory):
    path = tmp_path_factory.mktemp("schema") / "schema.yml"
    call_command("spectacular", "--file", str(path))
    return yaml.safe_load(path.read_text())


def test_what_each_endpoint_takes_is_what_the_schema_documents(schema):
    factory = APIRequestFactory()
    compared = 0
    for path, operations in schema["paths"].items():
        if path in ("/api/schema/", "/api/docs/"):
            continue
        url = re.sub(r"\{[^}]+\}", "1", path)
        match = resolve(url)
        for method, operation in operations.items():
            documented = sorted(p["name"] for p in operation.get("parameters", []) if p["in"] == "query" and p["name"] != "format")
            callback = match.func
            view = callback.cls(**getattr(callback, "initkwargs", {}))
            actions = getattr(callback, "actions", None)
            if actions is not None:
                view.action = actions[method]
                view.action_map = actions
                for name, value in (callback.initkwargs or {}).items():
                    setattr(view, name, value)
            request = view.initialize_request(getattr(factory, method)(url))
            view.request, view.args, view.kwargs = request, (), match.kwargs
            assert accepted_query_parameters(view, request) == documented, f"{method.upper()} {path}"
            compared += 1
    assert compared > 60


@pytest.fixture
def draft_job(db):
    return create_job(corpus=make_corpus(), name="draft", redundancy=1)


def test_a_misspelt_filter_is_refused_naming_it_and_what_the_list_takes(organizer_api, draft_job):
    response = organizer_api.get("/api/jobs/?state=live&limt=5")
    assert response.status_code == 400
    assert response.json() == {
        "limt": ["Unknown query parameter; this endpoint takes limit, offset."],
        "state": ["Unknown query parameter; this endpoint takes limit, offset."],
    }
    listed = organizer_api.get("/api/jobs/?limit=1&offset=0&format=json")
    assert listed.status_code == 200 and [job["id"] for job in listed.json()["results"]] == [draft_job.pk]


def test_a_refused_query_parameter_changes_nothing(organizer_api, draft_job):
    response = organizer_api.post(f"/api/jobs/{draft_job.pk}/launch/?dry_run=true")
    assert response.status_code == 400
    assert response.json() == {"dry_run": ["Unknown query parameter; this endpoint takes none."]}
    draft_job.refresh_from_db()
    assert draft_job.state == Job.State.DRAFT


def test_an_action_takes_the_parameters_it_names(organizer_api, db):
    job = make_live_job()
    assert organizer_api.get(f"/api/jobs/{job.pk}/reviews/?all=true").status_code == 200
    response = organizer_api.get(f"/api/jobs/{job.pk}/reviews/?everything=true")
    assert response.status_code == 400
    assert response.json() == {"everything": ["Unknown query parameter; this endpoint takes all."]}


@pytest.mark.parametrize("url", ["/api/crowd/jobs/{pk}/?verbose=1", "/api/evaluation/campaigns/?status=done", "/api/task-types/?kind=rewrite"])
def test_each_apps_api_refuses_them(organizer_api, draft_job, url):
    response = organizer_api.get(url.format(pk=draft_job.pk))
    assert response.status_code == 400, response.content
    [name] = response.json()
    assert name in url


def test_who_may_not_call_the_endpoint_hears_that_first(client, db):
    response = client.get("/api/jobs/?state=live")
    assert response.status_code in (401, 403)
