"""Quality control on the organizer pages: voting on/off with its summary, the review list with
verdict overrides, quality settings, the hard subset, the worker page with unblock; and the admin."""
import csv
import io
import re

import pytest
from django.apps import apps
from django.contrib import admin
from django.urls import reverse
from django.utils.html import escape

from annotation.models import CheckOverride, Job, QualityPolicy, Response, ReviewRound, Worker, WorkerStanding
from annotation.services.claims import claim_next_slot, submit_response
from annotation.services.jobs import create_job, launch_job
from annotation.services.quality import add_gold_item, apply_flags, override_verdict, set_quality
from annotation.services.voting import enable_voting, vote_job_of
from tests.factories import MISSING_ID, good_answers, make_corpus, make_live_job
from tests.quality.helpers import vote, write

pytestmark = pytest.mark.django_db

HOSTILE = '<script>alert("x")</script>'


# --- builders ---------------------------------------------------------------------------------------


def soft_blocked(job, worker):
    """Fail `worker` on a one-item onboarding of `job`: they end up soft-blocked."""
    set_quality(job, onboarding_items=1, onboarding_pass_rate=1.0)
    payload = dict(job.items.order_by("position").first().payload)
    add_gold_item(job, payload=payload, gold={"paraphrase": "A paraphrase nobody will write, centre cheap."})
    slot = claim_next_slot(job=job, worker=worker)
    assert slot.item.gold is not None
    submit_response(slot_id=slot.id, worker=worker, answers=good_answers(slot.item))
    assert WorkerStanding.objects.get(worker=worker, job=job).state == WorkerStanding.State.SOFT_BLOCKED
    return slot.item


@pytest.fixture
def world(make_annotator):
    job = make_live_job(make_corpus(dialogs=2, user_turns=1), name="rewrites")
    author = make_annotator("author")[1]
    response = write(job, author)
    return {"job": job, "author": author, "response": response, "worker": author}


def login(client, user):
    client.force_login(user)
    return client


# --- permission matrix ------------------------------------------------------------------------------

# (method, url name, kwargs, POST body, status for an organizer). Anonymous users are sent to log in
# (302), annotators get the 403 page that says why; neither changes anything.
PAGES = [
    ("get", "organizer:job", {"pk": "job"}, None, 200),
    ("post", "organizer:job-voting", {"pk": "job"}, {"enabled": "on", "votes_per_response": 3, "against_threshold": 2, "max_rounds": 3, "on_voted_down": "reject"}, 302),
    ("post", "organizer:job-quality", {"pk": "job"}, "quality", 302),
    ("post", "organizer:response-override", {"pk": "response"}, {"status": "rejected", "check": "flags", "reason": "copied text"}, 302),
    ("get", "organizer:worker", {"pk": "worker"}, None, 200),
    ("post", "organizer:worker-unblock", {"pk": "worker", "job_pk": "job"}, None, 302),
    ("get", "organizer:job-subset", {"pk": "job"}, None, 302),  # a rewrite job has no subset: back to the job page
]


def quality_form_data(**changes):
    from annotation.services.quality import COUNT_FIELDS, RATE_FIELDS

    data = {name: QualityPolicy._meta.get_field(name).default for name in (*RATE_FIELDS, *COUNT_FIELDS)}
    data.update(changes)
    return data


def _snapshot():
    return (
        list(QualityPolicy.objects.values_list("job_id", "voting_enabled", "gold_start_rate")),
        list(Response.objects.order_by("pk").values_list("pk", "status")),
        list(WorkerStanding.objects.values_list("pk", "state")),
        CheckOverride.objects.count(),
        Job.objects.count(),
    )


@pytest.mark.parametrize("method,name,kwargs,body,organizer_status", PAGES, ids=[f"{m} {n}" for m, n, _, _, _ in PAGES])
@pytest.mark.parametrize("role", ["anonymous", "annotator", "organizer"])
def test_quality_page_permission_matrix(role, method, name, kwargs, body, organizer_status, world, organizer, make_annotator, client):
    soft_blocked(world["job"], world["worker"]) if name == "organizer:worker-unblock" else None
    if role == "annotator":
        client.force_login(make_annotator("ann")[0])
    elif role == "organizer":
        client.force_login(organizer)
    url = reverse(name, kwargs={k: world[v].pk for k, v in kwargs.items()})
    before = _snapshot()
    if method == "get":
        response = client.get(url)
    else:
        response = client.post(url, quality_form_data(gold_start_rate=0.7) if body == "quality" else (body or {}))
    expected = {"anonymous": 302, "annotator": 403, "organizer": organizer_status}[role]
    assert response.status_code == expected
    if role == "anonymous":
        assert "/login" in response["Location"]
    if role == "annotator":
        assert "Organizers only" in response.content.decode()
    if role != "organizer":
        assert _snapshot() == before
    elif method == "post":
        assert _snapshot() != before  # the organizer's write took effect


def test_writes_refuse_get(world, organizer, client):
    login(client, organizer)
    for url in [
        reverse("organizer:job-voting", kwargs={"pk": world["job"].pk}),
        reverse("organizer:job-quality", kwargs={"pk": world["job"].pk}),
        reverse("organizer:response-override", kwargs={"pk": world["response"].pk}),
        reverse("organizer:worker-unblock", kwargs={"pk": world["worker"].pk, "job_pk": world["job"].pk}),
    ]:
        assert client.get(url).status_code == 405, url


def test_missing_objects_are_404(organizer, client):
    login(client, organizer)
    assert client.get(reverse("organizer:worker", kwargs={"pk": MISSING_ID})).status_code == 404
    assert client.post(reverse("organizer:response-override", kwargs={"pk": MISSING_ID}), {"reason": "x"}).status_code == 404
    assert client.post(reverse("organizer:job-voting", kwargs={"pk": MISSING_ID})).status_code == 404


# --- voting -----------------------------------------------------------------------------------------


def test_job_page_offers_voting_with_help_on_every_setting(world, organizer, client):
    page = login(client, organizer).get(reverse("organizer:job", kwargs={"pk": world["job"].pk})).content.decode()
    for name in ("votes_per_response", "against_threshold", "max_rounds", "on_voted_down"):
        assert f'name="{name}"' in page
        assert escape(QualityPolicy._meta.get_field(name).help_text) in page
    assert "Soft-reject (paid, data excluded)" in page and "Reject (not paid)" in page
    # The section first says whether voting runs: off here, though it goes on to say what it does.
    assert '<p id="voting-state"><strong>Voting is off.</strong>' in page


def test_the_settings_help_names_no_internal_field():
    """Help texts are read by organizers: a setting is named by its label, never as `votes_per_response`."""
    from annotation.web.organizer_forms import QualitySettingsForm, VotingForm

    for form in (VotingForm(), QualitySettingsForm()):
        for name, field in form.fields.items():
            assert "`" not in field.help_text and not re.search(r"\b[a-z]+_[a-z_]+\b", field.help_text), (name, field.help_text)


def test_turning_voting_on_creates_the_vote_job_with_the_settings_then_off(world, organizer, client):
    job = world["job"]
    login(client, organizer)
    url = reverse("organizer:job-voting", kwargs={"pk": job.pk})
    response = client.post(url, {"enabled": "on", "votes_per_response": 5, "against_threshold": 3, "max_rounds": 2, "on_voted_down": "reject"})
    assert response.status_code == 302
    policy = QualityPolicy.objects.get(job=job)
    assert (policy.voting_enabled, policy.votes_per_response, policy.against_threshold, policy.max_rounds, policy.on_voted_down) == (
        True, 5, 3, 2, "reject"
    )
    vote_job = vote_job_of(job)
    assert vote_job.redundancy == 5
    assert vote_job.items.get().subject_response == world["response"]  # the backlog went to the vote
    page = client.get(response["Location"]).content.decode()
    assert '<p id="voting-state"><strong>Voting is on.</strong>' in page and vote_job.name in page

    client.post(url, {"votes_per_response": 5, "against_threshold": 3, "max_rounds": 2, "on_voted_down": "reject"})
    assert QualityPolicy.objects.get(job=job).voting_enabled is False
    page = client.get(reverse("organizer:job", kwargs={"pk": job.pk})).content.decode()
    assert '<p id="voting-state"><strong>Voting is off.</strong>' in page


def test_the_builder_sets_what_a_vote_pays_until_the_first_vote(world, organizer, make_annotator, client):
    job = world["job"]
    login(client, organizer)
    url = reverse("organizer:job-voting", kwargs={"pk": job.pk})
    settings = {"enabled": "on", "votes_per_response": 3, "against_threshold": 2, "max_rounds": 3, "on_voted_down": "reject"}
    page = client.get(reverse("organizer:job", kwargs={"pk": job.pk})).content.decode()
    assert "Pay per vote (USD)" in page and "each response costs this times the votes per response" in page
    client.post(url, {**settings, "vote_reward": "0.15"})
    vote_job = vote_job_of(job)
    assert str(vote_job.reward) == "0.15"
    page = client.get(reverse("organizer:job", kwargs={"pk": job.pk})).content.decode()
    assert "3 votes per response, $0.15 per vote" in page
    client.post(url, {**settings, "vote_reward": "0.20"})  # no vote yet: the pay changes
    vote_job.refresh_from_db()
    assert str(vote_job.reward) == "0.20"
    client.post(url, settings)  # left empty: the pay stays
    vote_job.refresh_from_db()
    assert str(vote_job.reward) == "0.20"

    voter = make_annotator("voter")[1]
    slot = claim_next_slot(job=vote_job, worker=voter)
    submit_response(slot_id=slot.pk, worker=voter, answers={"vote": "for", "reason": ""})
    refused = client.post(url, {**settings, "vote_reward": "0.50"})
    assert refused.status_code == 400
    assert "the vote job has votes already, so its pay stays $0.20 per vote" in refused.content.decode()
    vote_job.refresh_from_db()
    assert str(vote_job.reward) == "0.20"


@pytest.mark.parametrize(
    "changes, field, words",
    [
        ({"against_threshold": 4}, "against_threshold", "Cannot exceed the votes per response"),
        ({"max_rounds": 0}, "max_rounds", "greater than or equal to 1"),
        ({"on_voted_down": "burn"}, "on_voted_down", "Select a valid choice"),
    ],
)
def test_bad_voting_settings_are_shown_by_the_field_and_change_nothing(changes, field, words, world, organizer, client):
    data = {"enabled": "on", "votes_per_response": 3, "against_threshold": 2, "max_rounds": 3, "on_voted_down": "reject", **changes}
    response = login(client, organizer).post(reverse("organizer:job-voting", kwargs={"pk": world["job"].pk}), data)
    assert response.status_code == 400
    form = response.context["voting_form"]
    assert any(words in e for e in form.errors[field])
    assert words in response.content.decode()
    assert not QualityPolicy.objects.exists() and vote_job_of(world["job"]) is None


def test_voting_refused_by_the_service_is_shown(organizer, client):
    job = launch_job(create_job(corpus=make_corpus(dialogs=1, user_turns=1), name="scores", task_type="hard_score"))
    response = login(client, organizer).post(
        reverse("organizer:job-voting", kwargs={"pk": job.pk}),
        {"enabled": "on", "votes_per_response": 3, "against_threshold": 2, "max_rounds": 3, "on_voted_down": "reject"},
    )
    assert response.status_code == 400
    assert "cannot be voted on" in response.content.decode()
    assert vote_job_of(job) is None


def test_voting_summary_and_reviewed_items_after_a_round(make_annotator, organizer, client):
    job = make_live_job(make_corpus(dialogs=2, user_turns=1), name="rewrites")
    vote_job = enable_voting(job, max_rounds=1)
    down = write(job, make_annotator("a1")[1])
    up = write(job, make_annotator("a2")[1])
    voters = [make_annotator(f"v{i}")[1] for i in range(3)]
    for v in voters:  # the first vote item each voter claims is `down`'s; the second is `up`'s
        vote(vote_job, v, "against", reason="unrecognizable")
        vote(vote_job, v, "for")
    assert ReviewRound.objects.get(response=down).state == ReviewRound.State.EXHAUSTED
    assert ReviewRound.objects.get(response=up).state == ReviewRound.State.PASSED

    response = login(client, organizer).get(reverse("organizer:job", kwargs={"pk": job.pk}))
    summary = response.context["voting_summary"]
    assert (summary.voted_down, summary.flagged, summary.passed) == (1, 1, 1)
    page = response.content.decode()
    assert '<td id="voted-down">1</td>' in page and '<td id="flagged">1</td>' in page
    # Both items have their response in, but only one has a response an export can use.
    assert '<td id="items-done">2 / 2</td>' in page and '<td id="items-accepted">1 / 2 ' in page
    assert summary.vote_alpha == pytest.approx(1.0)  # every voter agreed on both responses
    # Two responses are far too few for an interval that covers 95%: none, and the page says why.
    assert '<td id="vote-alpha">1.000 <span class="muted" id="vote-alpha-withheld">(no interval: too few responses, 2 of the 50 needed)</span>' in page
    reviews = {r.item_id: r for r in response.context["item_reviews"]}
    assert reviews[down.item_id].final_state == "flagged" and reviews[up.item_id].final_state == "passed"
    assert "0 for / 3 against" in page and "3 for / 0 against" in page
    assert "against: unrecognizable" in page
    # The voted-down response is in the review queue with its votes and their reasons.
    queue = client.get(reverse("organizer:job-review", kwargs={"pk": job.pk}) + "?vote=exhausted")
    rows = {row.response_id: row for row in queue.context["queue"].page.object_list}
    assert set(rows) == {down.pk} and rows[down.pk].vote_state == ReviewRound.State.EXHAUSTED
    assert [v.vote for v in rows[down.pk].votes] == ["against"] * 3
    assert "unrecognizable" in queue.content.decode()

    # A reviewer decides against both votes: the table says so beside what the vote did.
    override_verdict(up, status="rejected", reason="asks for another area", check="vote", by=organizer)
    override_verdict(down, status="accepted", reason="readable after all", check="vote", by=organizer)
    page = client.get(reverse("organizer:job", kwargs={"pk": job.pk})).content.decode()
    assert f"passed; then response {up.pk} rejected (not paid) by a reviewer" in page
    assert f"flagged; then response {down.pk} accepted by a reviewer" in page
    assert "exhausted (then accepted by a reviewer)" in page


def test_alpha_shows_its_note_when_it_cannot_be_computed(world, organizer, client):
    enable_voting(world["job"])
    page = login(client, organizer).get(reverse("organizer:job", kwargs={"pk": world["job"].pk})).content.decode()
    assert "n/a (no response has two votes yet)" in page
    assert "n/a (no item reviewed yet)" not in page  # one item is under review


# --- review list and overrides ----------------------------------------------------------------------


def test_review_list_shows_worker_flags_per_response(make_annotator, organizer, client):
    job = make_live_job(make_corpus(dialogs=3, user_turns=1), name="rewrites")
    paster = make_annotator("paster")[1]
    for _ in range(3):
        slot = claim_next_slot(job=job, worker=paster)
        submit_response(slot_id=slot.id, worker=paster, answers=good_answers(slot.item),
                        telemetry={"paraphrase": {"pasted_chars": 80, "typed_chars": 0}})
    apply_flags(job)  # the sweep stores the flags; the page only reads them
    response = login(client, organizer).get(reverse("organizer:job-review", kwargs={"pk": job.pk}) + "?flag=pasted")
    rows = response.context["queue"].page.object_list
    assert len(rows) == 3 and all("pasted" in row.response_flags and "pasted" in [f.code for f in row.worker_flags] for row in rows)
    page = response.content.decode()
    assert '<strong>Mostly pasted rather than typed</strong>' in page
    assert "<strong>Mostly pasted rather than typed</strong> (worker): 3 of 3 responses mostly pasted" in page
    assert '<option value="pasted" selected>mostly pasted rather than typed</option>' in page
    assert "<strong>pasted</strong>" not in page  # a flag is named in words, not by its code
    assert reverse("organizer:worker", kwargs={"pk": paster.pk}) in page


def test_every_response_can_be_listed(world, organizer, client):
    login(client, organizer)
    url = reverse("organizer:job-review", kwargs={"pk": world["job"].pk})
    assert list(client.get(url + "?flag=any").context["queue"].page.object_list) == []  # nothing against the one response
    rows = client.get(url).context["queue"].page.object_list
    assert [row.response_id for row in rows] == [world["response"].pk]


def test_override_needs_a_reason_and_changes_nothing_without_one(world, organizer, client):
    response_row = world["response"]
    url = reverse("organizer:response-override", kwargs={"pk": response_row.pk})
    page = login(client, organizer).post(url, {"status": "rejected", "check": "flags", "reason": "   "})
    assert page.status_code == 400
    assert page.context["queue"] and "This field is required." in page.content.decode()
    response_row.refresh_from_db()
    assert response_row.status == Response.Status.ACCEPTED and not CheckOverride.objects.exists()


def test_override_with_a_reason_changes_the_status_and_keeps_the_reason(world, organizer, client):
    response_row = world["response"]
    login(client, organizer)
    url = reverse("organizer:response-override", kwargs={"pk": response_row.pk})
    done = client.post(url, {"status": "excluded", "check": "flags", "reason": f"Copied from the web {HOSTILE}"})
    assert done.status_code == 302
    response_row.refresh_from_db()
    assert response_row.status == Response.Status.EXCLUDED
    record = CheckOverride.objects.get(response=response_row)
    assert (record.reason, record.by, record.check_name, record.previous_status) == (
        f"Copied from the web {HOSTILE}", organizer, "flags", "accepted"
    )
    page = client.get(done["Location"]).content.decode()
    assert "is now excluded (paid, data left out)" in page and "1 override" in page


def test_override_recollect_with_accept_is_refused_by_the_field(world, organizer, client):
    url = reverse("organizer:response-override", kwargs={"pk": world["response"].pk})
    page = login(client, organizer).post(url, {"status": "accepted", "check": "vote", "reason": "fine", "recollect": "on"})
    assert page.status_code == 400 and "Only a rejected response can be re-collected" in page.content.decode()
    assert not CheckOverride.objects.exists()


# --- quality settings -------------------------------------------------------------------------------


def test_quality_settings_show_their_help_and_save(world, organizer, client):
    login(client, organizer)
    job_url = reverse("organizer:job", kwargs={"pk": world["job"].pk})
    page = client.get(job_url).content.decode()
    for name in ("gold_start_rate", "onboarding_items", "paste_share", "flags_reject"):
        assert escape(QualityPolicy._meta.get_field(name).help_text) in page
    data = quality_form_data(gold_start_rate=0.25, onboarding_items=4, flags_reject="on")
    assert client.post(reverse("organizer:job-quality", kwargs={"pk": world["job"].pk}), data).status_code == 302
    policy = QualityPolicy.objects.get(job=world["job"])
    assert (policy.gold_start_rate, policy.onboarding_items, policy.flags_reject, policy.voting_enabled) == (0.25, 4, True, False)
    assert 'value="0.25"' in client.get(job_url).content.decode()


@pytest.mark.parametrize("changes, field", [
    ({"paste_share": 1.5}, "paste_share"), ({"session_gap_minutes": 0}, "session_gap_minutes"),
    ({"gold_decay_items": "many"}, "gold_decay_items"),
    # A typing flag "from 0 characters" would flag every answer with a log, honest or not.
    ({"synthetic_min_chars": 0}, "synthetic_min_chars"), ({"offscreen_min_chars": 0}, "offscreen_min_chars"),
    ({"revision_free_min_chars": 0}, "revision_free_min_chars"),
])
def test_bad_quality_settings_are_shown_and_nothing_is_saved(changes, field, world, organizer, client):
    response = login(client, organizer).post(reverse("organizer:job-quality", kwargs={"pk": world["job"].pk}), quality_form_data(**changes))
    assert response.status_code == 400
    assert field in response.context["quality_form"].errors
    if changes[field] == 0:
        assert "greater than or equal to 1" in response.context["quality_form"].errors[field][0]
    assert not QualityPolicy.objects.exists()


# --- hard subset ------------------------------------------------------------------------------------


def test_hard_score_jobs_link_their_hard_subset_as_csv(make_annotator, organizer, client):
    job = launch_job(create_job(corpus=make_corpus(dialogs=2, user_turns=1), name="scores", task_type="hard_score"))
    for name, score in (("r1", 4), ("r2", 2)):
        worker = make_annotator(name)[1]
        slot = claim_next_slot(job=job, worker=worker)
        submit_response(slot_id=slot.id, worker=worker, answers={"criterion_1": score, "criterion_2": score})
    login(client, organizer)
    page = client.get(reverse("organizer:job", kwargs={"pk": job.pk})).content.decode()
    url = reverse("organizer:job-subset", kwargs={"pk": job.pk})
    assert url in page and 'id="voting-unsupported"' in page
    download = client.get(url)
    assert download.status_code == 200 and download["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(download.content.decode())))
    assert len(rows) == 1 and float(rows[0]["mean"]) == 4.0  # the item scored 2 is not hard


def test_rewrite_jobs_have_no_hard_subset_link(world, organizer, client):
    login(client, organizer)
    page = client.get(reverse("organizer:job", kwargs={"pk": world["job"].pk})).content.decode()
    assert reverse("organizer:job-subset", kwargs={"pk": world["job"].pk}) not in page
    refused = client.get(reverse("organizer:job-subset", kwargs={"pk": world["job"].pk}), follow=True)
    assert "defines no subset" in refused.content.decode()


# --- worker page ------------------------------------------------------------------------------------


def test_worker_page_shows_standing_gold_and_unblocks(world, organizer, client):
    job, worker = world["job"], world["worker"]
    soft_blocked(job, worker)
    login(client, organizer)
    url = reverse("organizer:worker", kwargs={"pk": worker.pk})
    page = client.get(url).content.decode()
    assert "Soft-blocked" in page and "failed the onboarding qualification" in page
    assert "1 wrong of 1" in page and "(gold)" in page and "Gold: wrong" in page
    unblock = reverse("organizer:worker-unblock", kwargs={"pk": worker.pk, "job_pk": job.pk})
    assert unblock in page
    after = client.post(unblock, follow=True)
    assert WorkerStanding.objects.get(worker=worker, job=job).state == WorkerStanding.State.QUALIFIED
    assert "may work on" in after.content.decode() and unblock not in after.content.decode()
    assert claim_next_slot(job=job, worker=worker) is not None


def test_unblocking_a_worker_who_is_not_blocked_says_so(world, organizer, client):
    login(client, organizer)
    unblock = reverse("organizer:worker-unblock", kwargs={"pk": world["worker"].pk, "job_pk": world["job"].pk})
    page = client.post(unblock, follow=True).content.decode()
    assert "This worker is not soft-blocked on this job." in page
    assert not WorkerStanding.objects.exists()


def test_worker_page_shows_flags_with_their_evidence(make_annotator, organizer, client):
    job = make_live_job(make_corpus(dialogs=2, user_turns=1), name="rewrites")
    worker = make_annotator("paster")[1]
    for _ in range(2):
        slot = claim_next_slot(job=job, worker=worker)
        submit_response(slot_id=slot.id, worker=worker, answers=good_answers(slot.item),
                        telemetry={"paraphrase": {"pasted_chars": 50, "typed_chars": 5, "keystrokes": 7}})
    apply_flags(job)  # the sweep stores the flags; the page only reads them
    page = login(client, organizer).get(reverse("organizer:worker", kwargs={"pk": worker.pk})).content.decode()
    assert "2 of 2 responses mostly pasted rather than typed (100%)" in page
    assert "paraphrase: 5 typed, 50 pasted" in page


# --- escaping ---------------------------------------------------------------------------------------


def test_user_text_is_escaped_on_the_quality_pages(organizer, client):
    corpus = make_corpus(dialogs=1, user_turns=1)
    turn = corpus.dialogs.get().turns.get(index=0)
    turn.text = f"I need a cheap table in the centre {HOSTILE}"
    turn.save()
    job = make_live_job(corpus, name=f"job {HOSTILE}")
    enable_voting(job)
    worker = Worker.objects.create(provider="prolific", external_id=f"w{HOSTILE}")
    response = write(job, worker)
    from annotation.services.quality import override_verdict
    from annotation.services.responses import confirm

    confirm(response, actor="provider:prolific")  # a crowd response is decided once the provider confirms it
    override_verdict(response, status="rejected", reason=f"reason {HOSTILE}", check="vote")
    login(client, organizer)
    for url in [
        reverse("organizer:job", kwargs={"pk": job.pk}),
        reverse("organizer:job-review", kwargs={"pk": job.pk}),
        reverse("organizer:worker", kwargs={"pk": worker.pk}),
    ]:
        page = client.get(url).content.decode()
        assert HOSTILE not in page, url
        assert "&lt;script&gt;" in page, url


# --- admin ------------------------------------------------------------------------------------------


def test_every_annotation_model_is_in_the_admin(admin_client):
    for model in apps.get_app_config("annotation").get_models():
        assert admin.site.is_registered(model), model.__name__
        url = reverse(f"admin:annotation_{model._meta.model_name}_changelist")
        assert admin_client.get(url).status_code == 200, url
