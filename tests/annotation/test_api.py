"""The organizer REST API: who may call what, corpus upload, jobs and their states, progress, exports.

The permission matrix is a table: every endpoint, every role, the status each must get.
"""
import io
import json
from pathlib import Path

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Corpus, ExportRun, ImportRun, Job, JobCreationRun, Response, RunStatus
from annotation.services.claims import claim_next_slot, submit_response
from annotation.services.jobs import create_job, finish_job, launch_job
from tests.factories import MISSING_ID, good_answers, make_corpus

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "api"
MULTIWOZ = FIXTURES / "multiwoz21-sample.json"


# --- helpers ----------------------------------------------------------------------------------------


def client_for(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def multiwoz_upload(name="restaurants", extra_dialog_id=None, **fields):
    """The multipart body of a MultiWOZ upload; with `extra_dialog_id` the sample dialog appears twice."""
    data = json.loads(MULTIWOZ.read_text(encoding="utf-8"))
    if extra_dialog_id:
        data[extra_dialog_id] = next(iter(data.values()))
    upload = io.BytesIO(json.dumps(data).encode())
    upload.name = "data.json"
    return {"name": name, "source_format": "multiwoz", "data": upload, **fields}


def upload_corpus(client, django_capture_on_commit_callbacks, **kwargs):
    """POST an upload and let its import run (the test's transaction holds back on_commit until then)."""
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/api/corpora/", multiwoz_upload(**kwargs), format="multipart")
    assert response.status_code == 202, response.data
    assert response.data["status"] in ("pending", "running", "succeeded", "failed")
    return client.get(f"/api/imports/{response.data['id']}/")


def made_job(client, body) -> dict:
    """POST a corpus job, follow its creation run (already run: tasks run in the test) to the job it made."""
    accepted = client.post("/api/jobs/", body, format="json")
    assert accepted.status_code == 202, accepted.data
    run = client.get(accepted["Location"]).data
    assert (run["status"], run["finished"]) == ("succeeded", True), run
    return client.get(run["job_url"]).data


def two_rewrites(item):
    """A paraphrase and a typo version of an item's utterance that pass the rewrite checks."""
    text = item.payload["utterance"]
    return {"paraphrase": "Well, " + text, "typos": text + " pls"}


def succeeded_export(job, tmp_path) -> ExportRun:
    """A finished export run with one file on disk (the export's contents are tested elsewhere)."""
    directory = tmp_path / "exports" / f"job-{job.pk}" / "run-x"
    (directory / "paraphrase").mkdir(parents=True)
    (directory / "paraphrase" / "data.json").write_text('{"ok": true}', encoding="utf-8")
    (directory / "responses.csv").write_text("item_id\n", encoding="utf-8")
    return ExportRun.objects.create(
        job=job, status=RunStatus.SUCCEEDED, directory=str(directory), files=["paraphrase/data.json", "responses.csv"]
    )


@pytest.fixture
def world(tmp_path, organizer):
    """One of everything an endpoint can address (the job creation is the organizer's own)."""
    corpus = make_corpus(dialogs=3, user_turns=2)
    draft = create_job(corpus=corpus, name="draft job")
    live = launch_job(create_job(corpus=corpus, name="live job"))
    import_run = ImportRun.objects.create(corpus_name=corpus.name, source_format="jsonl", status=RunStatus.SUCCEEDED, corpus=corpus)
    export = succeeded_export(live, tmp_path)
    creation = JobCreationRun.objects.create(corpus=corpus, name="draft job", status=RunStatus.SUCCEEDED, job=draft, created_by=organizer)
    return {"corpus": corpus, "draft": draft, "live": live, "import": import_run, "export": export, "creation": creation}


# --- permission matrix ------------------------------------------------------------------------------

# (method, path template, body, status for an organizer). Anonymous callers get 401 (the API asks
# for a token), logged-in non-organizers 403, whatever the endpoint.
ENDPOINTS = [
    ("get", "/api/corpora/", None, 200),
    ("get", "/api/corpora/{corpus}/", None, 200),
    ("post", "/api/corpora/", "upload", 202),
    ("get", "/api/imports/", None, 200),
    ("get", "/api/imports/{import}/", None, 200),
    ("get", "/api/jobs/", None, 200),
    ("post", "/api/jobs/", "job", 202),
    ("get", "/api/job-creations/", None, 200),
    ("get", "/api/job-creations/{creation}/", None, 200),
    ("get", "/api/jobs/{draft}/", None, 200),
    ("post", "/api/jobs/{draft}/launch/", None, 200),
    ("post", "/api/jobs/{live}/pause/", None, 200),
    ("post", "/api/jobs/{live}/finish/", None, 200),
    ("get", "/api/jobs/{live}/progress/", None, 200),
    ("get", "/api/jobs/{live}/exports/", None, 200),
    ("post", "/api/jobs/{live}/exports/", None, 202),
    ("get", "/api/exports/", None, 200),
    ("get", "/api/exports/{export}/", None, 200),
    ("get", "/api/exports/{export}/files/responses.csv", None, 200),
    ("get", "/api/task-types/", None, 200),
]


def _call(client, method, template, body, world):
    path = template.format(**{key: obj.pk for key, obj in world.items()})
    if body == "upload":
        return client.post(path, multiwoz_upload(name="uploaded"), format="multipart")
    if body == "job":
        return client.post(path, {"corpus": world["corpus"].pk, "name": "new job"}, format="json")
    return getattr(client, method)(path)


@pytest.mark.parametrize("method,template,body,organizer_status", ENDPOINTS, ids=[f"{m} {t}" for m, t, _, _ in ENDPOINTS])
@pytest.mark.parametrize("role", ["anonymous", "annotator", "organizer"])
def test_permission_matrix(role, method, template, body, organizer_status, world, organizer, make_annotator, django_capture_on_commit_callbacks):
    user = {"anonymous": None, "annotator": make_annotator("ann")[0], "organizer": organizer}[role]
    before = Job.objects.order_by("pk").values_list("pk", "state")
    before = list(before)
    with django_capture_on_commit_callbacks(execute=True):
        response = _call(client_for(user), method, template, body, world)
    expected = {"anonymous": 401, "annotator": 403, "organizer": organizer_status}[role]
    assert response.status_code == expected, getattr(response, "data", response)
    if role != "organizer":
        assert "detail" in response.data  # the reason is given
        assert list(Job.objects.order_by("pk").values_list("pk", "state")) == before  # nothing changed
        assert not Corpus.objects.filter(name="uploaded").exists()
    if role == "annotator":
        assert "organizer" in str(response.data["detail"])


def test_missing_objects_are_404_on_every_detail_route(organizer):
    client = client_for(organizer)
    for path in [
        f"/api/corpora/{MISSING_ID}/", f"/api/imports/{MISSING_ID}/", f"/api/jobs/{MISSING_ID}/", f"/api/jobs/{MISSING_ID}/progress/",
        f"/api/jobs/{MISSING_ID}/exports/", f"/api/exports/{MISSING_ID}/", f"/api/exports/{MISSING_ID}/files/responses.csv",
        f"/api/job-creations/{MISSING_ID}/",
    ]:
        assert client.get(path).status_code == 404, path
    for path in [f"/api/jobs/{MISSING_ID}/launch/", f"/api/jobs/{MISSING_ID}/pause/", f"/api/jobs/{MISSING_ID}/finish/", f"/api/jobs/{MISSING_ID}/exports/"]:
        assert client.post(path).status_code == 404, path


def test_object_permission_is_checked_on_detail_routes(world, organizer, monkeypatch):
    """A detail route refuses when the object-level check refuses, even if the view-level one passed."""
    from quorum.api.permissions import IsOrganizer

    monkeypatch.setattr(IsOrganizer, "has_object_permission", lambda self, request, view, obj: False)
    client = client_for(organizer)
    for path in [
        f"/api/corpora/{world['corpus'].pk}/", f"/api/imports/{world['import'].pk}/", f"/api/jobs/{world['live'].pk}/",
        f"/api/jobs/{world['live'].pk}/progress/", f"/api/exports/{world['export'].pk}/",
        f"/api/exports/{world['export'].pk}/files/responses.csv",
    ]:
        assert client.get(path).status_code == 403, path
    assert client.post(f"/api/jobs/{world['draft'].pk}/launch/").status_code == 403
    assert Job.objects.get(pk=world["draft"].pk).state == Job.State.DRAFT


def test_a_detail_route_asks_whether_the_user_is_an_organizer_once(world, organizer):
    """The view's check and the object's check share one answer per request."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client = client_for(organizer)
    with CaptureQueriesContext(connection) as queries:
        assert client.get(f"/api/jobs/{world['live'].pk}/").status_code == 200
    assert sum('"auth_group"' in q["sql"] for q in queries.captured_queries) == 1
    # The answer is the request's, not the user's: a user removed from the group is refused next time.
    organizer.groups.clear()
    assert client.get(f"/api/jobs/{world['live'].pk}/").status_code == 403


# --- tokens -----------------------------------------------------------------------------------------


def test_token_from_username_and_password_opens_the_api_to_organizers(organizer, make_annotator):
    response = APIClient().post("/api/token/", {"username": "olga", "password": "organizer-pass-1"}, format="json")
    assert response.status_code == 200
    token = response.data["token"]
    assert Token.objects.get(user=organizer).key == token
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert client.get("/api/jobs/").status_code == 200

    make_annotator("ann")
    annotator_token = APIClient().post("/api/token/", {"username": "ann", "password": "ann-pass-1"}).data["token"]
    client.credentials(HTTP_AUTHORIZATION=f"Token {annotator_token}")
    assert client.get("/api/jobs/").status_code == 403


def test_token_refused_for_a_wrong_password(organizer):
    response = APIClient().post("/api/token/", {"username": "olga", "password": "wrong"}, format="json")
    assert response.status_code == 400
    assert "token" not in response.data


# --- corpora and imports ----------------------------------------------------------------------------


def test_upload_a_multiwoz_corpus_then_read_it_back(organizer, django_capture_on_commit_callbacks, settings):
    client = client_for(organizer)
    run = upload_corpus(client, django_capture_on_commit_callbacks, name="restaurants", extra_dialog_id="PMUL90002.json").data
    assert run["status"] == "succeeded", run["error"]
    assert run["progress"] == 1.0
    assert run["files"] == ["data"]
    assert str(settings.QUORUM_IMPORT_DIR) not in json.dumps(run)  # no server paths

    corpus = client.get(f"/api/corpora/{run['corpus']}/").data
    assert (corpus["name"], corpus["source_format"]) == ("restaurants", "multiwoz")
    assert (corpus["dialog_count"], corpus["turn_count"]) == (2, 12)
    assert client.get(f"/api/imports/{run['id']}/").data["status"] == "succeeded"
    listed = client.get("/api/corpora/").data
    assert [c["name"] for c in listed["results"]] == ["restaurants"]

    saved = [p for p in Path(settings.QUORUM_IMPORT_DIR).rglob("*") if p.is_file()]
    assert [(p.parent.name, p.name) for p in saved] == [("data", "data.json")]


def test_upload_of_malformed_json_fails_the_run_with_a_reason_and_imports_nothing(organizer, django_capture_on_commit_callbacks, settings):
    bad = io.BytesIO(b'{"SNG1.json": {"log": [')
    bad.name = "../../my corpus.json"
    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(organizer).post(
            "/api/corpora/", {"name": "broken", "source_format": "multiwoz", "data": bad}, format="multipart"
        )
    assert response.status_code == 202
    run = client_for(organizer).get(f"/api/imports/{response.data['id']}/").data
    assert run["status"] == "failed"
    assert "my_corpus.json" in run["error"]  # names the file the user sent (made safe)
    # The refused upload is removed (it was saved inside the import directory, whatever the name said).
    assert not [p for p in Path(settings.QUORUM_IMPORT_DIR).rglob("*") if p.is_file()]
    assert not Corpus.objects.filter(name="broken").exists()


@pytest.mark.parametrize(
    "change,field",
    [
        ({"data": None}, "data"),  # no corpus file
        ({"data": "not a file"}, "data"),
        ({"source_format": "csv"}, "source_format"),
        ({"name": ""}, "name"),
        ({"labels": "labels.json"}, "labels"),  # MultiWOZ takes no labels file
        ({"knowledge": "knowledge.json"}, "knowledge"),
    ],
)
def test_malformed_uploads_are_400_naming_the_field(change, field, organizer, settings):
    body = multiwoz_upload(name="x")
    for key, value in change.items():
        if value is None:
            body.pop(key)
        elif key in ("labels", "knowledge"):
            extra = io.BytesIO(b"[]")
            extra.name = value
            body[key] = extra
        else:
            body[key] = value
    response = client_for(organizer).post("/api/corpora/", body, format="multipart")
    assert response.status_code == 400
    assert field in response.data and response.data[field]
    assert not ImportRun.objects.exists()
    assert not any(Path(settings.QUORUM_IMPORT_DIR).rglob("*.json"))  # a refused upload leaves no file


def test_upload_with_a_taken_name_is_400(organizer):
    make_corpus(name="restaurants")
    response = client_for(organizer).post("/api/corpora/", multiwoz_upload(name="restaurants"), format="multipart")
    assert response.status_code == 400
    assert "already exists" in response.data["name"][0]


# --- jobs -------------------------------------------------------------------------------------------


@pytest.fixture
def uploaded(organizer, django_capture_on_commit_callbacks):
    """The MultiWOZ sample uploaded through the API, with a second copy of its dialog (6 user turns)."""
    response = upload_corpus(client_for(organizer), django_capture_on_commit_callbacks, extra_dialog_id="PMUL90002.json")
    assert response.data["status"] == "succeeded", response.data["error"]
    return Corpus.objects.get(pk=response.data["corpus"])


@pytest.mark.parametrize(
    "selection,items",
    [
        (None, 6),  # all: every user turn of both dialogs
        ({"mode": "all"}, 6),
        ({"mode": "sample", "size": 4, "seed": 3}, 4),
        ({"mode": "dialogs", "dialog_ids": ["PMUL90002.json"]}, 3),
    ],
)
def test_create_a_job_with_each_selection_mode_launch_it_and_read_progress(selection, items, uploaded, organizer, make_annotator):
    client = client_for(organizer)
    _, ann = make_annotator("ann")
    body = {
        "corpus": uploaded.pk, "name": "rewrites", "task_type": "rewrite", "settings": {"variants": ["paraphrase", "typos"]},
        "redundancy": 2, "reward": "0.50", "instructions": "Keep <b>slot values</b>.", "annotators": [ann.pk],
    }
    if selection:
        body["selection"] = selection
    job = made_job(client, body)
    assert (job["state"], job["item_count"], job["annotators"]) == ("draft", items, [ann.pk])
    assert job["settings"]["variants"] == ["paraphrase", "typos"]
    if selection and selection["mode"] == "dialogs":
        assert set(Job.objects.get(pk=job["id"]).items.values_list("turn__dialog__external_id", flat=True)) == {"PMUL90002.json"}

    launched = client.post(f"/api/jobs/{job['id']}/launch/")
    assert launched.status_code == 200 and launched.data["state"] == "live"

    job_row = Job.objects.get(pk=job["id"])
    slot = claim_next_slot(job=job_row, worker=ann)
    submit_response(slot_id=slot.id, worker=ann, answers=two_rewrites(slot.item), active_seconds=40)
    progress = client.get(f"/api/jobs/{job['id']}/progress/").data
    assert progress["items_total"] == items
    assert progress["slots_total"] == 2 * items
    assert progress["slots_submitted"] == 1
    assert progress["responses_by_status"] == {Response.Status.ACCEPTED: 1}
    assert progress["mean_active_seconds"] == 40
    assert progress["workers"] == 1
    assert progress["responses_per_item"] == pytest.approx(1 / items)
    assert client.get(f"/api/jobs/{job['id']}/").data["progress"] == progress


def test_sample_selection_is_the_same_for_the_same_seed(uploaded, organizer):
    client = client_for(organizer)
    picks = []
    for name in ("a", "b"):
        body = {"corpus": uploaded.pk, "name": name, "selection": {"mode": "sample", "size": 3, "seed": 11}}
        job_id = made_job(client, body)["id"]
        picks.append(list(Job.objects.get(pk=job_id).items.order_by("position").values_list("turn_id", flat=True)))
    assert picks[0] == picks[1] and len(picks[0]) == 3


@pytest.mark.parametrize(
    "change,field,words",
    [
        ({"task_type": "sarcasm"}, "task_type", "unknown task type"),
        ({"settings": {"variants": ["sarcastic"]}}, "settings", "variants"),
        ({"settings": {"colour": "red"}}, "settings", "colour"),
        ({"settings": {"typo_max_edit_ratio": 3}}, "settings", "typo_max_edit_ratio"),
        ({"selection": {"mode": "sample"}}, "selection", "size"),
        ({"selection": {"mode": "dialogs"}}, "selection", "dialog"),
        ({"selection": {"mode": "dialogs", "dialog_ids": ["NOPE.json"]}}, "selection", "NOPE.json"),
        ({"selection": {"mode": "everything"}}, "selection", "mode"),
        ({"redundancy": 0}, "redundancy", "1"),
        ({"reward": "-1"}, "reward", "0"),
        ({"name": ""}, "name", "blank"),
        ({"corpus": MISSING_ID}, "corpus", str(MISSING_ID)),
        ({"annotators": [MISSING_ID]}, "annotators", str(MISSING_ID)),
    ],
)
def test_bad_job_requests_are_400_naming_the_field(change, field, words, uploaded, organizer):
    body = {"corpus": uploaded.pk, "name": "rewrites", **change}
    response = client_for(organizer).post("/api/jobs/", body, format="json")
    assert response.status_code == 400, response.data
    assert field in response.data
    assert words in json.dumps(response.data[field])
    assert not Job.objects.exists() and not JobCreationRun.objects.exists()  # nothing recorded


def test_bad_settings_have_one_shape_whoever_finds_them(uploaded, organizer):
    """The serializer's check and the service's (JobError) answer alike: a list of messages per setting."""
    client = client_for(organizer)
    by_serializer = client.post("/api/jobs/", {"corpus": uploaded.pk, "name": "r", "settings": {"colour": "red"}}, format="json")
    assert by_serializer.status_code == 400
    assert isinstance(by_serializer.json()["settings"]["colour"], list)
    from annotation.services.jobs import JobError

    assert JobError("bad", errors={"colour": "unknown"}).field_errors() == {"settings": {"colour": ["unknown"]}}


def test_a_sample_larger_than_the_corpus_fails_its_creation_under_selection_size(uploaded, organizer):
    """Whether a sample fits is known once the turns are read, by the creation: it fails, saying why
    and about which field, and nothing is made."""
    body = {"corpus": uploaded.pk, "name": "rewrites", "selection": {"mode": "sample", "size": 100000}}
    client = client_for(organizer)
    response = client.post("/api/jobs/", body, format="json")
    assert response.status_code == 202
    run = client.get(response["Location"]).data
    assert (run["status"], run["finished"], run["error_field"], run["job"], run["job_url"]) == ("failed", True, "selection.size", None, None)
    assert run["error"] == (
        "a sample of 100,000 turns is more than the 6 user turns of corpus 'restaurants'; ask for at most 6, or take every source turn"
    )
    assert not Job.objects.exists()


def test_a_corpus_without_user_turns_fails_its_creation_naming_the_selection(organizer):
    """A corpus with no user turns passes the request checks; the creation refuses the selection."""
    corpus = Corpus.objects.create(name="empty", source_format="jsonl")
    response = client_for(organizer).post("/api/jobs/", {"corpus": corpus.pk, "name": "x"}, format="json")
    assert response.status_code == 202
    assert (response.data["status"], response.data["error_field"]) == ("failed", "selection") and "no turns" in response.data["error"]


def test_state_changes_follow_the_job_state_machine(world, organizer):
    client = client_for(organizer)
    live = world["live"]
    refused = client.post(f"/api/jobs/{world['draft'].pk}/pause/")  # a draft cannot pause
    assert refused.status_code == 409 and "draft job cannot" in refused.data["detail"]
    assert client.post(f"/api/jobs/{live.pk}/pause/").data["state"] == "paused"
    assert client.post(f"/api/jobs/{live.pk}/launch/").data["state"] == "live"  # resume
    assert client.post(f"/api/jobs/{live.pk}/finish/").data["state"] == "finished"
    for action in ("launch", "pause", "finish"):
        response = client.post(f"/api/jobs/{live.pk}/{action}/")
        assert response.status_code == 409  # as the crowd API answers a launch it refuses
        said = {"launch": "a finished job cannot be launched", "pause": "a finished job cannot become paused", "finish": "the job is already finished"}
        assert response.data["detail"] == said[action] and response.data["state"] == [response.data["detail"]]
    assert Job.objects.get(pk=live.pk).state == Job.State.FINISHED


def test_launching_a_finished_job_is_409_with_a_message(world, organizer):
    job = finish_job(world["live"])
    response = client_for(organizer).post(f"/api/jobs/{job.pk}/launch/")
    assert response.status_code == 409
    assert response.data == {"detail": "a finished job cannot be launched", "state": ["a finished job cannot be launched"]}


def test_actions_refuse_get(world, organizer):
    assert client_for(organizer).get(f"/api/jobs/{world['draft'].pk}/launch/").status_code == 405
    assert Job.objects.get(pk=world["draft"].pk).state == Job.State.DRAFT


def test_task_types_list_their_settings_with_defaults_and_help(organizer):
    kinds = client_for(organizer).get("/api/task-types/").data
    rewrite = next(k for k in kinds if k["key"] == "rewrite")
    settings = {s["name"]: s for s in rewrite["settings"]}
    assert settings["variants"]["default"] == ["paraphrase", "typos", "verbose", "simplified"]
    assert "paraphrase" in settings["variants"]["help"]
    assert 0 < settings["typo_max_edit_ratio"]["default"] <= 1


# --- exports ----------------------------------------------------------------------------------------


def test_export_a_job_then_download_its_files(world, organizer, make_annotator, django_capture_on_commit_callbacks):
    client = client_for(organizer)
    job = world["live"]
    _, ann = make_annotator("ann")
    slot = claim_next_slot(job=job, worker=ann)
    answers = good_answers(slot.item)
    submit_response(slot_id=slot.id, worker=ann, answers=answers)

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/api/jobs/{job.pk}/exports/")
    assert response.status_code == 202
    run = client.get(f"/api/exports/{response.data['id']}/").data
    assert run["status"] == "succeeded", run["error"]
    names = [f["name"] for f in run["files"]]
    assert "responses.csv" in names and any(n.startswith("paraphrase/") for n in names)

    csv_file = client.get(f"/api/exports/{run['id']}/files/responses.csv")
    assert csv_file.status_code == 200
    assert "attachment" in csv_file["Content-Disposition"]
    assert answers["paraphrase"] in b"".join(csv_file.streaming_content).decode()
    url = next(f["url"] for f in run["files"] if f["name"].startswith("paraphrase/"))
    paraphrases = client.get(url)
    assert paraphrases.status_code == 200
    assert answers["paraphrase"] in b"".join(paraphrases.streaming_content).decode()
    # A variant's download is named by the job and the variant, not "data.json" like every other variant.
    name = next(f["name"] for f in run["files"] if f["name"].startswith("paraphrase/"))
    assert f'filename="job-{job.pk}-{name.replace("/", "-")}"' in paraphrases["Content-Disposition"]
    assert [r["id"] for r in client.get(f"/api/jobs/{job.pk}/exports/").data][0] == run["id"]

    # The whole export as one zip, every listed file under one folder.
    import io
    import zipfile

    packed = client.get(f"/api/exports/{run['id']}/zip/")
    assert packed.status_code == 200 and packed["Content-Type"] == "application/zip"
    assert f'filename="job-{job.pk}-export-{run["id"]}.zip"' in packed["Content-Disposition"]
    archive = zipfile.ZipFile(io.BytesIO(b"".join(packed.streaming_content)))
    folder = f"job-{job.pk}-export-{run['id']}/"
    assert sorted(archive.namelist()) == sorted(folder + n for n in names)
    assert answers["paraphrase"] in archive.read(folder + "responses.csv").decode()


def test_export_refused_by_the_service_is_400(organizer):
    job = create_job(corpus=make_corpus(), name="x")
    Job.objects.filter(pk=job.pk).update(settings={"variants": []})  # nothing to export as test sets
    response = client_for(organizer).post(f"/api/jobs/{job.pk}/exports/")
    assert response.status_code == 400
    assert "no rewrite variants" in response.data["job"][0]
    assert not ExportRun.objects.exists()


@pytest.mark.parametrize(
    "name",
    [
        "manifest.json",  # not in the run's file list, though a plausible name
        "../../../../etc/passwd",
        "%2e%2e/%2e%2e/outside.txt",
        "paraphrase/../../outside.txt",
        "/etc/passwd",
    ],
)
def test_download_refuses_names_not_in_the_runs_file_list(name, world, organizer, tmp_path):
    (tmp_path / "exports" / "outside.txt").write_text("secret", encoding="utf-8")
    response = client_for(organizer).get(f"/api/exports/{world['export'].pk}/files/{name}")
    assert response.status_code == 404
    assert b"secret" not in b"".join(getattr(response, "streaming_content", [response.content]))


def test_download_refuses_a_listed_name_that_leads_outside_the_directory(world, organizer, tmp_path):
    (tmp_path / "exports" / "outside.txt").write_text("secret", encoding="utf-8")
    run = world["export"]
    run.files = [*run.files, "../../outside.txt"]
    run.save(update_fields=["files"])
    assert client_for(organizer).get(f"/api/exports/{run.pk}/files/../../outside.txt").status_code == 404


def test_download_of_an_unfinished_export_is_404(world, organizer):
    run = ExportRun.objects.create(job=world["live"], status=RunStatus.RUNNING)
    assert client_for(organizer).get(f"/api/exports/{run.pk}/files/responses.csv").status_code == 404


# --- schema -----------------------------------------------------------------------------------------


def test_openapi_schema_describes_the_job_endpoints(client):
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    schema = json.loads(response.content)
    for path in ["/api/jobs/", "/api/jobs/{id}/", "/api/jobs/{id}/launch/", "/api/jobs/{id}/progress/", "/api/jobs/{id}/exports/"]:
        assert path in schema["paths"], path
    assert "tokenAuth" in schema["components"]["securitySchemes"]


def test_schema_generates_without_warnings_and_validates(tmp_path):
    from django.core.management import call_command

    out = tmp_path / "schema.yml"
    call_command("spectacular", "--fail-on-warn", "--validate", "--file", str(out))  # raises on any warning
    assert "/api/jobs/{id}/launch/:" in out.read_text(encoding="utf-8")


@pytest.mark.django_db
def test_a_pairwise_job_is_created_from_payloads_and_bad_ones_are_named(organizer_api):
    """POST /api/jobs/ makes a payload-built job from `payloads`; a bad payload is a 400 naming it,
    a corpus type without a corpus and a type made elsewhere say what to do."""
    pair = {"context": [{"speaker": "user", "text": "Hi"}], "a": {"system": "A", "text": "x"}, "b": {"system": "B", "text": "y"}}
    created = organizer_api.post("/api/jobs/", {"name": "pairs", "task_type": "pairwise", "payloads": [pair, pair]}, format="json")
    assert created.status_code == 201, created.content
    assert created.json()["item_count"] == 2
    bad = organizer_api.post("/api/jobs/", {"name": "bad", "task_type": "pairwise", "payloads": [pair, {"a": {}}]}, format="json")
    assert bad.status_code == 400 and "payload 1" in bad.content.decode()
    assert organizer_api.post("/api/jobs/", {"name": "p", "task_type": "pairwise"}, format="json").status_code == 400
    no_corpus = organizer_api.post("/api/jobs/", {"name": "r", "task_type": "rewrite"}, format="json")
    assert no_corpus.status_code == 400 and "corpus" in no_corpus.json()
    chat = organizer_api.post("/api/jobs/", {"name": "c", "task_type": "chat", "payloads": [pair]}, format="json")
    assert chat.status_code == 400 and "/evaluation/interactive/new/" in chat.content.decode()
    described = {t["key"]: t for t in organizer_api.get("/api/task-types/").json()}
    assert '"a": {"system"' in described["pairwise"]["payload_file"] and described["rewrite"]["payload_file"] == ""
