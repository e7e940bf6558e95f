"""Organizer pages: who may see them, upload -> import run, job form -> job page, state buttons, exports."""
import io
import re
from pathlib import Path

import pytest
from django.urls import reverse

from annotation.models import Corpus, ExportRun, ImportRun, Job, RunStatus
from annotation.services.claims import claim_next_slot, submit_response
from annotation.services.jobs import create_job, launch_job
from tests.factories import MISSING_ID, good_answers, make_corpus

pytestmark = pytest.mark.django_db

MULTIWOZ = Path(__file__).resolve().parent.parent / "fixtures" / "api" / "multiwoz21-sample.json"
HOSTILE = '<script>alert("x")</script>'


def multiwoz_file(content=None):
    upload = io.BytesIO(content if content is not None else MULTIWOZ.read_bytes())
    upload.name = "data.json"
    return upload


@pytest.fixture
def world():
    corpus = make_corpus(dialogs=2, user_turns=2)
    draft = create_job(corpus=corpus, name="draft job")
    live = launch_job(create_job(corpus=corpus, name="live job"))
    run = ImportRun.objects.create(corpus_name=corpus.name, source_format="jsonl", status=RunStatus.SUCCEEDED, corpus=corpus)
    export = ExportRun.objects.create(job=draft, status=RunStatus.RUNNING, done=1, total=4)
    return {"corpus": corpus, "draft": draft, "live": live, "import": run, "export": export}


def job_form_data(corpus, **changes):
    data = {
        "corpus": corpus.pk, "name": "rewrites", "task_type": "rewrite",
        "setting__rewrite__variants": "paraphrase, typos, verbose, simplified",
        "setting__rewrite__typo_max_edit_ratio": "0.3",
        "selection_mode": "all", "seed": "0", "redundancy": "2", "reward": "0.50",
        "claim_timeout_minutes": "30", "instructions": "",
    }
    data.update(changes)
    return data


# --- permission matrix ------------------------------------------------------------------------------

# (method, path name, kwargs keys, body, status for an organizer). Anonymous users are sent to the
# login page (302), logged-in non-organizers get a 403 page that says why.
PAGES = [
    ("get", "organizer:dashboard", {}, None, 200),
    ("get", "organizer:corpus-upload", {}, None, 200),
    ("post", "organizer:corpus-upload", {}, "upload", 302),
    ("get", "organizer:import-run", {"pk": "import"}, None, 200),
    ("get", "organizer:import-progress", {"pk": "import"}, None, 200),
    ("get", "organizer:export-progress", {"pk": "export"}, None, 200),
    ("get", "organizer:job-new", {}, None, 200),
    ("post", "organizer:job-new", {}, "job", 302),
    ("get", "organizer:job", {"pk": "live"}, None, 200),
    ("post", "organizer:job-action", {"pk": "draft", "action": "launch"}, None, 302),
    ("post", "organizer:job-action", {"pk": "live", "action": "pause"}, None, 302),
    ("post", "organizer:job-action", {"pk": "live", "action": "finish"}, None, 302),
    ("post", "organizer:job-export", {"pk": "live"}, None, 302),
]


@pytest.mark.parametrize("method,name,kwargs,body,organizer_status", PAGES, ids=[f"{m} {n} {k}" for m, n, k, _, _ in PAGES])
@pytest.mark.parametrize("role", ["anonymous", "annotator", "organizer"])
def test_page_permission_matrix(role, method, name, kwargs, body, organizer_status, world, organizer, make_annotator, client):
    if role == "annotator":
        client.force_login(make_annotator("ann")[0])
    elif role == "organizer":
        client.force_login(organizer)
    url = reverse(name, kwargs={k: (world[v].pk if v in world else v) for k, v in kwargs.items()})
    states = list(Job.objects.order_by("pk").values_list("pk", "state"))
    exports = ExportRun.objects.count()
    if body == "upload":
        response = client.post(url, {"name": "uploaded", "source_format": "multiwoz", "data": multiwoz_file()})
    elif body == "job":
        response = client.post(url, job_form_data(world["corpus"], name="new job"))
    else:
        response = getattr(client, method)(url)

    if role == "anonymous":
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))
    elif role == "annotator":
        assert response.status_code == 403
        assert b"Organizers only" in response.content
    else:
        assert response.status_code == organizer_status
    if role != "organizer":
        assert list(Job.objects.order_by("pk").values_list("pk", "state")) == states
        assert not Job.objects.filter(name="new job").exists()
        assert not ImportRun.objects.filter(corpus_name="uploaded").exists()
        assert ExportRun.objects.count() == exports


def test_actions_and_export_refuse_get(world, organizer, client):
    client.force_login(organizer)
    assert client.get(reverse("organizer:job-action", kwargs={"pk": world["draft"].pk, "action": "launch"})).status_code == 405
    assert client.get(reverse("organizer:job-export", kwargs={"pk": world["live"].pk})).status_code == 405
    assert Job.objects.get(pk=world["draft"].pk).state == Job.State.DRAFT


def test_missing_objects_are_404(organizer, client):
    client.force_login(organizer)
    assert client.get(reverse("organizer:job", kwargs={"pk": MISSING_ID})).status_code == 404
    assert client.get(reverse("organizer:import-run", kwargs={"pk": MISSING_ID})).status_code == 404
    assert client.post(reverse("organizer:job-action", kwargs={"pk": MISSING_ID, "action": "launch"})).status_code == 404


# --- dashboard --------------------------------------------------------------------------------------


def test_dashboard_lists_corpora_jobs_and_runs_with_counts_and_progress(world, organizer, make_annotator, client):
    _, ann = make_annotator("ann")
    live = world["live"]
    slot = claim_next_slot(job=live, worker=ann)
    submit_response(slot_id=slot.id, worker=ann, answers=good_answers(slot.item))
    ExportRun.objects.create(job=live, status=RunStatus.FAILED, error="disk full")
    client.force_login(organizer)
    page = client.get(reverse("organizer:dashboard")).content.decode()
    assert "restaurants" in page
    assert "<td>2</td>" in page and "<td>8</td>" in page  # 2 dialogs, 8 turns
    assert "live job" in page and "draft job" in page
    assert 'progress value="1" max="4"' in page  # one of 4 wanted responses of the live job
    assert "Failed" in page and "Succeeded" in page  # the export and import runs


def test_user_text_is_escaped_on_every_page(organizer, client, tmp_path):
    corpus = make_corpus(name=HOSTILE)
    job = create_job(corpus=corpus, name=HOSTILE, instructions=HOSTILE)
    run = ImportRun.objects.create(corpus_name=HOSTILE, source_format="jsonl", status=RunStatus.FAILED, error=HOSTILE)
    ExportRun.objects.create(job=job, status=RunStatus.FAILED, error=HOSTILE)
    client.force_login(organizer)
    for url in [
        reverse("organizer:dashboard"), reverse("organizer:job", kwargs={"pk": job.pk}),
        reverse("organizer:import-run", kwargs={"pk": run.pk}), reverse("organizer:job-new"),
    ]:
        page = client.get(url).content.decode()
        assert HOSTILE not in page, url
        assert "&lt;script&gt;" in page, url


# --- upload and import run --------------------------------------------------------------------------


def test_upload_form_imports_the_corpus_and_shows_the_run(organizer, client, django_capture_on_commit_callbacks):
    client.force_login(organizer)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("organizer:corpus-upload"), {"name": "restaurants", "source_format": "multiwoz", "data": multiwoz_file()}
        )
    run = ImportRun.objects.get(corpus_name="restaurants")
    assert response["Location"] == reverse("organizer:import-run", kwargs={"pk": run.pk})
    page = client.get(response["Location"]).content.decode()
    assert "Succeeded" in page
    assert Corpus.objects.get(name="restaurants").dialogs.count() == 1
    assert f"?corpus={run.corpus_id}" in page  # offers the next step
    assert "data-progress-url" not in page  # a finished run is not polled


def test_pending_import_run_page_follows_its_progress(organizer, client):
    run = ImportRun.objects.create(corpus_name="big", source_format="multiwoz", done=30, total=120)
    client.force_login(organizer)
    page = client.get(reverse("organizer:import-run", kwargs={"pk": run.pk})).content.decode()
    assert "Pending" in page
    assert f'data-progress-url="{reverse("organizer:import-progress", kwargs={"pk": run.pk})}"' in page and "progress.js" in page
    assert 'value="0.25"' in page and ">25</span>% done" in page
    state = client.get(reverse("organizer:import-progress", kwargs={"pk": run.pk})).json()
    assert (state["status"], state["done"], state["total"], state["progress"], state["finished"]) == ("pending", 30, 120, 0.25, False)
    assert 'id="import-run"' in state["html"] and "data-progress-url" in state["html"]


def test_failed_import_shows_its_error(organizer, client, django_capture_on_commit_callbacks):
    client.force_login(organizer)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("organizer:corpus-upload"), {"name": "broken", "source_format": "multiwoz", "data": multiwoz_file(b"[1, 2")}
        )
    page = client.get(response["Location"]).content.decode()
    assert "The import failed" in page and "data.json" in page
    assert not Corpus.objects.filter(name="broken").exists()


def test_upload_form_errors_are_shown_and_nothing_is_saved(organizer, client, settings):
    make_corpus(name="restaurants")
    client.force_login(organizer)

    def knowledge():
        upload = io.BytesIO(b"{}")
        upload.name = "knowledge.json"
        return upload

    response = client.post(
        reverse("organizer:corpus-upload"),
        {"name": "restaurants", "source_format": "multiwoz", "data": multiwoz_file(), "knowledge": knowledge()},
    )
    assert response.status_code == 200
    assert "already exists" in response.content.decode()
    response = client.post(
        reverse("organizer:corpus-upload"),
        {"name": "other", "source_format": "multiwoz", "data": multiwoz_file(), "knowledge": knowledge()},
    )
    assert response.status_code == 200
    assert "takes no knowledge file" in response.content.decode()
    assert not ImportRun.objects.exists()
    assert not any(Path(settings.QUORUM_IMPORT_DIR).rglob("*.json"))


# --- job form ---------------------------------------------------------------------------------------


def test_job_form_shows_every_setting_with_its_help(world, organizer, client):
    client.force_login(organizer)
    page = client.get(reverse("organizer:job-new") + f"?corpus={world['corpus'].pk}").content.decode()
    assert 'name="setting__rewrite__variants"' in page and 'value="paraphrase, typos, verbose, simplified"' in page
    assert "RADDLE asks for all four" in page  # the setting's help text
    assert 'name="setting__rewrite__typo_max_edit_ratio"' in page
    assert f'<option value="{world["corpus"].pk}" selected>' in page
    # Kinds built from corpus turns or from a payload file (with its format shown) are offered; votes
    # (made by turning voting on) and chats (made from registered systems) are made elsewhere.
    assert '<option value="hard_score"' in page and '<option value="pairwise"' in page and '<option value="likert"' in page
    assert 'id="payload-format-pairwise"' in page
    assert '<option value="vote"' not in page and '<option value="chat"' not in page


@pytest.mark.parametrize(
    "changes,items",
    [
        ({}, 4),
        ({"selection_mode": "sample", "sample_size": "3", "seed": "5"}, 3),
        ({"selection_mode": "dialogs", "dialog_ids": "d1"}, 2),
    ],
)
def test_job_form_creates_a_draft_job(changes, items, world, organizer, make_annotator, client):
    _, ann = make_annotator("ann")
    client.force_login(organizer)
    data = job_form_data(world["corpus"], **changes, **{"setting__rewrite__variants": "typos, paraphrase", "annotators": [ann.pk]})
    response = client.post(reverse("organizer:job-new"), data)
    job = Job.objects.get(name="rewrites")
    assert response["Location"] == reverse("organizer:job", kwargs={"pk": job.pk})
    assert (job.state, job.items.count(), job.redundancy) == (Job.State.DRAFT, items, 2)
    assert job.settings == {"variants": ["paraphrase", "typos"], "typo_max_edit_ratio": 0.3, "entities": [], "entity_seed": 0}
    assert list(job.annotators.all()) == [ann]
    assert job.created_by == organizer


@pytest.mark.parametrize(
    "changes,message",
    [
        ({"setting__rewrite__variants": "sarcastic"}, "&quot;sarcastic&quot; is not a variant; choose from paraphrase, typos, verbose, simplified"),
        ({"setting__rewrite__typo_max_edit_ratio": "7"}, "at most 1"),
        ({"selection_mode": "sample"}, "A sample needs a size"),
        ({"selection_mode": "dialogs"}, "List at least one dialog id"),
        ({"selection_mode": "dialogs", "dialog_ids": "d1 NOPE"}, "NOPE"),
        ({"redundancy": "0"}, "greater than or equal to 1"),
    ],
)
def test_job_form_errors_are_shown_next_to_the_field(changes, message, world, organizer, client):
    client.force_login(organizer)
    before = Job.objects.count()
    response = client.post(reverse("organizer:job-new"), job_form_data(world["corpus"], **changes))
    assert response.status_code == 200
    assert message in response.content.decode()
    assert Job.objects.count() == before


def test_unknown_variants_are_named_in_the_variants_error(world, organizer, client):
    client.force_login(organizer)
    changes = {"setting__rewrite__variants": "paraphrase, typo, formal"}
    response = client.post(reverse("organizer:job-new"), job_form_data(world["corpus"], **changes))
    assert response.context["form"].errors["setting__rewrite__variants"] == [
        '"typo" and "formal" are not variants; choose from paraphrase, typos, verbose, simplified.'
    ]
    assert not Job.objects.filter(name="rewrites").exists()


def test_task_type_settings_are_labelled_and_explained_in_plain_words():
    """Help texts are read by builders: no code names (`[{slot, value}]`, a library, an environment
    variable, a field name), except where the builder writes the keys themselves (the questions' JSON)."""
    from annotation.web.organizer_forms import JobForm, setting_field_name

    form = JobForm()
    for kind in form.kinds:
        for name, (default, _help) in kind.settings_help.items():
            help_text = form.fields[setting_field_name(kind.key, name)].help_text
            for code in ("`", "[{", "QUORUM_", "rapidfuzz", "pocketsphinx"):
                assert code not in help_text, (kind.key, name, help_text)
            written_as_json = isinstance(default, list) and any(isinstance(v, dict) for v in default)
            if not written_as_json:
                assert not re.search(r"\b[a-z]+_[a-z_]+\b", help_text) and "As JSON" not in help_text, (kind.key, name, help_text)
    assert form.fields["setting__oos_insert__qa_pairs"].label == "QA pairs"
    assert form.fields["setting__qa_paraphrase__heldout_share"].label == "Held-out share"
    language = form.fields["setting__spoken_reading__language"].help_text
    assert "The speech recogniser on this server understands English only" in language and "operator" in language


def test_a_sample_larger_than_the_corpus_is_refused_under_the_sample_size(world, organizer, client):
    client.force_login(organizer)
    changes = {"selection_mode": "sample", "sample_size": "100000"}
    response = client.post(reverse("organizer:job-new"), job_form_data(world["corpus"], **changes))
    assert response.status_code == 200
    assert response.context["form"].errors["sample_size"] == [
        "a sample of 100,000 turns is more than the 4 user turns of corpus 'restaurants'; ask for at most 4, or take every source turn"
    ]
    assert not Job.objects.filter(name="rewrites").exists()


# --- job page ---------------------------------------------------------------------------------------


def test_job_page_and_dashboard_say_where_items_come_from_without_repeating_corpus(world, organizer, client):
    client.force_login(organizer)
    job_page = client.get(reverse("organizer:job", kwargs={"pk": world["live"].pk})).content.decode()
    dashboard = client.get(reverse("organizer:dashboard")).content.decode()
    assert "<tr><th>Items from</th><td>corpus restaurants</td></tr>" in job_page
    assert "<th>Items from</th>" in dashboard and '<td data-label="Items from">corpus restaurants</td>' in dashboard
    assert "<th>Corpus</th><td>corpus" not in job_page and "<th>Job</th><th>Corpus</th>" not in dashboard


def test_job_page_shows_state_buttons_and_progress(world, organizer, make_annotator, client):
    live = world["live"]
    _, ann = make_annotator("ann")
    slot = claim_next_slot(job=live, worker=ann)
    submit_response(slot_id=slot.id, worker=ann, answers=good_answers(slot.item), active_seconds=42)
    client.force_login(organizer)
    page = client.get(reverse("organizer:job", kwargs={"pk": live.pk})).content.decode()
    assert "Live" in page
    assert reverse("organizer:job-action", kwargs={"pk": live.pk, "action": "pause"}) in page
    assert reverse("organizer:job-action", kwargs={"pk": live.pk, "action": "finish"}) in page
    assert reverse("organizer:job-action", kwargs={"pk": live.pk, "action": "launch"}) not in page
    assert "1 / 4" in page  # items done
    assert "42.0 s" in page  # mean active time
    assert "accepted: 1" in page


def test_state_buttons_change_the_state_and_refusals_are_shown(world, organizer, client):
    client.force_login(organizer)
    draft = world["draft"]

    def act(action):
        return client.post(reverse("organizer:job-action", kwargs={"pk": draft.pk, "action": action}), follow=True)

    assert "now live" in act("launch").content.decode()
    assert "now paused" in act("pause").content.decode()
    assert "now finished" in client.post(reverse("organizer:job-action", kwargs={"pk": draft.pk, "action": "finish"}), {"confirm": "yes"}, follow=True).content.decode()
    page = act("launch").content.decode()
    assert "A finished job cannot be launched." in page  # a sentence, as the page says it
    assert Job.objects.get(pk=draft.pk).state == Job.State.FINISHED
    assert "Unknown action" in act("explode").content.decode()


def test_export_button_runs_an_export_and_lists_download_links(world, organizer, make_annotator, client, django_capture_on_commit_callbacks):
    live = world["live"]
    _, ann = make_annotator("ann")
    slot = claim_next_slot(job=live, worker=ann)
    submit_response(slot_id=slot.id, worker=ann, answers=good_answers(slot.item))
    client.force_login(organizer)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("organizer:job-export", kwargs={"pk": live.pk}))
    run = ExportRun.objects.get(job=live)
    assert run.status == RunStatus.SUCCEEDED, run.error
    page = client.get(reverse("organizer:job", kwargs={"pk": live.pk})).content.decode()
    link = reverse("api:export-file", kwargs={"pk": run.pk, "name": "responses.csv"})
    assert f'href="{link}"' in page
    download = client.get(link)  # the organizer's session is enough
    assert download.status_code == 200
    assert "responses.csv" in download["Content-Disposition"]


def test_export_refusal_is_shown(organizer, client):
    job = create_job(corpus=make_corpus(), name="x")
    Job.objects.filter(pk=job.pk).update(settings={"variants": []})
    client.force_login(organizer)
    page = client.post(reverse("organizer:job-export", kwargs={"pk": job.pk}), follow=True).content.decode()
    assert "no rewrite variants" in page
    assert not ExportRun.objects.exists()


def test_job_settings_are_shown_readably(organizer, client):
    job = create_job(corpus=make_corpus(), name="x", settings={"variants": ["typos", "verbose"]})
    client.force_login(organizer)
    page = client.get(reverse("organizer:job", kwargs={"pk": job.pk})).content.decode()
    assert "<code>variants</code>: typos, verbose" in page


def test_a_draft_is_deleted_only_when_the_organizer_confirms(world, organizer, client):
    draft = world["draft"]
    client.force_login(organizer)
    page = client.get(reverse("organizer:job", kwargs={"pk": draft.pk})).content.decode()
    assert f"Yes, delete “draft job” and its {draft.items.count()} items" in page
    url = reverse("organizer:job-delete", kwargs={"pk": draft.pk})
    refused = client.post(url, follow=True)
    assert Job.objects.filter(pk=draft.pk).exists()
    assert "Not deleted: tick “Yes, delete …”" in refused.content.decode()
    client.post(url, {"confirm": "yes"})
    assert not Job.objects.filter(pk=draft.pk).exists()


def test_the_job_page_says_which_in_house_annotators_it_is_open_to_without_leaving_the_crowd_out(world, organizer, make_annotator, client):
    client.force_login(organizer)
    url = reverse("organizer:job", kwargs={"pk": world["live"].pk})
    page = client.get(url).content.decode()
    assert re.search(r'<th>In-house annotators</th><td id="job-annotators">every one <span class="muted">\(a crowd', page)
    world["live"].annotators.add(make_annotator("ines")[1])
    assert re.search(r'<td id="job-annotators">ines <span', client.get(url).content.decode())


def test_finishing_a_job_asks_for_a_confirmation_first(world, organizer, client):
    """Finish sat beside Pause, one tap apart on a phone, and cannot be undone: it now asks."""
    client.force_login(organizer)
    live = world["live"]
    url = reverse("organizer:job-action", kwargs={"pk": live.pk, "action": "finish"})
    page = client.get(reverse("organizer:job", kwargs={"pk": live.pk})).content.decode()
    assert 'id="finish-confirm"' in page and "cannot be launched again" in page

    refused = client.post(url, follow=True).content.decode()
    assert "Not finished: tick" in refused
    assert Job.objects.get(pk=live.pk).state == Job.State.LIVE

    assert "now finished" in client.post(url, {"confirm": "yes"}, follow=True).content.decode()
    assert Job.objects.get(pk=live.pk).state == Job.State.FINISHED


def test_a_live_job_page_says_how_far_it_is_before_its_settings(world, organizer, make_annotator, client):
    """On a phone the settings table filled the first screen; how far the job is now comes first."""
    live = world["live"]
    _, ann = make_annotator("ann")
    slot = claim_next_slot(job=live, worker=ann)
    submit_response(slot_id=slot.id, worker=ann, answers=good_answers(slot.item))
    client.force_login(organizer)
    page = client.get(reverse("organizer:job", kwargs={"pk": live.pk})).content.decode()
    glance = page.split('id="job-at-a-glance">', 1)[1].split("</p>", 1)[0]
    assert "1 / 4 items complete" in glance and "1 / 4 responses submitted" in glance
    assert page.index('id="job-at-a-glance"') < page.index("<th>Task type</th>")
