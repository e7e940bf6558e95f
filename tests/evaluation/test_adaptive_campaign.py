"""Adaptive crowd campaigns on PostgreSQL: rounds added to the live job, looks, stopping, the hook's
idempotence and race safety, the settings' checks and the campaign page."""
import json
import threading
from statistics import NormalDist

import numpy as np
import pytest
from django.db import connection, connections
from django.test import Client
from django.urls import reverse

from annotation.models import Item, Job, Slot, Worker
from annotation.services.claims import claim_next_slot, submit_response
from evaluation.campaigns.services.adaptive import run_look
from evaluation.campaigns.services.campaigns import create_campaign, set_adaptive
from evaluation.campaigns.services.crowd import create_crowd_campaign, create_crowd_job, launch_crowd_job
from evaluation.campaigns.services.imports import import_entry, import_test_set
from evaluation.errors import EvaluationInputError
from evaluation.models import Campaign, CampaignItem, CampaignJob, CampaignLook
from evaluation.stats import allocation
from evaluation.tasks import sweep_adaptive_campaigns
from quorum.roles import make_organizer

pytestmark = [pytest.mark.postgres, pytest.mark.usefixtures("rotations_by_name")]

N_INSTANCES = 200
ROUND = 40
# Mean rating of each entry: one clearly best, one clearly worst, two close ones in between.
QUALITY = {"best/e": 4.4, "close1/e": 3.2, "close2/e": 3.22, "worst/e": 1.8}


def _write_test_set(directory):
    directory.mkdir(parents=True, exist_ok=True)
    labels = [{"target": True, "knowledge": [{"domain": "hotel", "entity_id": 1, "doc_id": 0}], "response": f"Reference {i}."} for i in range(N_INSTANCES)]
    knowledge = {"hotel": {"1": {"name": "Birch House", "docs": {"0": {"title": "Parking?", "body": "Free parking on site."}}}}}
    logs = [[{"speaker": "U", "text": f"Question {i} about Birch House?"}] for i in range(N_INSTANCES)]
    for name, data in {"labels.json": labels, "knowledge.json": knowledge, "logs.json": logs}.items():
        (directory / name).write_text(json.dumps(data))
    for label in QUALITY:
        team, entry = label.split("/")
        outputs = [{"target": True, "knowledge": labels[i]["knowledge"], "response": f"{team} says {i}."} for i in range(N_INSTANCES)]
        (directory / f"{team}.json").write_text(json.dumps(outputs))
    test_set = import_test_set("Adaptive challenge", "test", directory / "labels.json", directory / "knowledge.json", directory / "logs.json")
    entries = [import_entry(test_set, label.split("/")[0], "e", directory / f"{label.split('/')[0]}.json") for label in QUALITY]
    return test_set, entries


def _rating(label, instance, worker_name):
    """A seeded rating: the entry's quality, an instance effect shared by every entry, and noise."""
    instance_effect = np.random.default_rng(instance).normal(0, 0.6)
    noise = np.random.default_rng([instance, sum(map(ord, label)), sum(map(ord, worker_name))]).normal(0, 0.7)
    return int(np.clip(round(QUALITY.get(label, 4.8) + instance_effect + noise), 1, 5))  # 4.8: the ground truth


def _rated_pair(item_id, pairs):
    """(entry label, instance) of a campaign item. The pairing never changes: read for every item
    of the job at once, again only when a new round has added items."""
    if item_id not in pairs:
        job_items = CampaignItem.objects.filter(item__job__items__pk=item_id).select_related("entry__team")
        pairs.update((pair.item_id, (pair.entry.label, pair.instance)) for pair in job_items)
    return pairs[item_id]


def _answers(item_id, worker, pairs):
    label, instance = _rated_pair(item_id, pairs)
    return {q: _rating(label, instance, worker.external_id) for q in ("appropriateness", "accuracy")}


def _rate_until_no_work(job, workers, capture):
    """Workers take turns claiming and answering; the rating hook runs after each commit (eager
    tasks). Returns how many responses were given."""
    given, pairs = 0, {}
    while True:
        progressed = False
        for worker in workers:
            job.refresh_from_db()
            if job.state != Job.State.LIVE:
                return given
            slot = claim_next_slot(job=job, worker=worker)
            if slot is None:
                continue
            answers = _answers(slot.item_id, worker, pairs)
            with capture(execute=True):
                submit_response(slot_id=slot.pk, worker=worker, answers=answers)
            given += 1
            progressed = True
        if not progressed:
            return given


def _adaptive_campaign(tmp_path, name="adaptive", budget=None, confidence=0.95, top_k=None):
    test_set, entries = _write_test_set(tmp_path / "data")
    crowd = create_crowd_campaign(
        name, test_set, entries, with_references=False, redundancy=1, order_seed=11,
        adaptive={"confidence": confidence, "top_k": top_k, "budget": budget, "round_size": ROUND},
    )
    launch_crowd_job(crowd.campaign)
    crowd.refresh_from_db()
    return crowd


@pytest.mark.django_db
def test_the_beat_sweep_queues_a_look_at_each_running_campaign_only(tmp_path, queued_by_name):
    crowd = _adaptive_campaign(tmp_path)
    assert sweep_adaptive_campaigns() == 1
    assert queued_by_name == [("evaluation.tasks.run_adaptive_look", crowd.campaign.pk)]
    CampaignLook.objects.create(campaign=crowd.campaign, number=1, instances=ROUND, ratings_spent=ROUND * len(QUALITY), critical_value=2.5, decision=CampaignLook.Decision.RESOLVED)
    assert sweep_adaptive_campaigns() == 0 and len(queued_by_name) == 1  # a stopped campaign is left alone


@pytest.mark.django_db
def test_campaign_stops_early_with_the_clear_pairs_resolved_and_rates_only_open_systems(tmp_path, make_annotator, django_capture_on_commit_callbacks):
    assert connection.vendor == "postgresql"
    crowd = _adaptive_campaign(tmp_path, budget=400)
    campaign, job = crowd.campaign, crowd.job
    full_design = N_INSTANCES * len(QUALITY)
    # The first round: every entry on the first ROUND instances of the seeded order.
    assert crowd.round_sizes == [40, 80, 120, 160, 200]
    assert sorted(crowd.round_order) == list(range(N_INSTANCES))
    first = set(crowd.round_order[:ROUND])
    assert {p.instance for p in CampaignItem.objects.filter(campaign=campaign)} == first
    assert Slot.objects.filter(job=job).count() == ROUND * len(QUALITY)
    assert crowd.critical_value == pytest.approx(allocation.boundary(crowd.round_sizes, N_INSTANCES, 0.05))
    assert crowd.critical_value > 1.96  # several looks: wider than one look's interval

    workers = [make_annotator(f"rater{i}")[1] for i in range(3)]
    _rate_until_no_work(job, workers, django_capture_on_commit_callbacks)

    looks = list(CampaignLook.objects.filter(campaign=campaign).order_by("number"))
    assert len(looks) >= 2
    last = looks[-1]
    # The close pair keeps the two close entries rated until it settles as a tie (its interval inside
    # what even the full design could not separate) or the next round would pass the budget.
    assert last.decision in (CampaignLook.Decision.RESOLVED, CampaignLook.Decision.BUDGET)
    states = {(p["a"], p["b"]): p for p in last.pairs}
    # Every pair with the clearly best or clearly worst entry is resolved, in the true order.
    for (a, b), pair in states.items():
        if {"best/e", "worst/e"} & {a, b}:
            assert pair["state"] == "resolved", (a, b, pair)
            truth = a if QUALITY[a] > QUALITY[b] else b
            assert pair["better"] == truth
    # The close pair (a true gap of 0.02) is never resolved in the wrong order: open, settled as a
    # tie, or (which the raters' noise sometimes allows) resolved the true way round.
    close = states[("close1/e", "close2/e")]
    assert close["state"] in ("open", "tied") or close["better"] == "close2/e", close

    spent = Slot.objects.filter(job=job).count()
    assert spent < full_design and spent <= campaign.adaptive_budget
    assert last.ratings_spent == spent
    # After the look that resolved them, the clear systems got no more items: only open pairs' systems did.
    for earlier, later in zip(looks, looks[1:], strict=False):
        rated_later = {p.entry.label for p in CampaignItem.objects.filter(campaign=campaign, instance__in=crowd.round_order[earlier.instances : later.instances]).select_related("entry__team")}
        assert rated_later == set(earlier.active)
        assert earlier.added_ratings == len(set(earlier.active)) * (later.instances - earlier.instances)
    assert set(looks[0].active) == {"close1/e", "close2/e"}  # the clear systems left after the first round
    job.refresh_from_db()
    assert job.state == Job.State.FINISHED
    assert Campaign.objects.get(pk=campaign.pk).state == Campaign.State.CLOSED


@pytest.mark.django_db
def test_a_top_1_goal_stops_as_soon_as_the_best_is_separated(tmp_path, make_annotator, django_capture_on_commit_callbacks):
    crowd = _adaptive_campaign(tmp_path, top_k=1)
    _rate_until_no_work(crowd.job, [make_annotator("k1")[1], make_annotator("k2")[1]], django_capture_on_commit_callbacks)
    looks = list(CampaignLook.objects.filter(campaign=crowd.campaign))
    assert [look.decision for look in looks] == [CampaignLook.Decision.RESOLVED]
    pairs = {(p["a"], p["b"]): p["state"] for p in looks[0].pairs}
    assert all(state == "resolved" for (a, b), state in pairs.items() if "best/e" in (a, b))
    assert Slot.objects.filter(job=crowd.job).count() == ROUND * len(QUALITY)  # one round of the five


@pytest.mark.django_db
def test_budget_is_never_exceeded(tmp_path, make_annotator, django_capture_on_commit_callbacks):
    crowd = _adaptive_campaign(tmp_path, budget=200)  # the first round (160) and not one more full round
    # One rater: with two, who rates which item follows each rater's rotation, a hash of the job's
    # and the worker's ids, which depend on what ran before in this database; the look is then decided
    # by different ratings and can settle every pair before the budget speaks.
    _rate_until_no_work(crowd.job, [make_annotator("r1")[1]], django_capture_on_commit_callbacks)
    last = CampaignLook.objects.filter(campaign=crowd.campaign).latest("number")
    assert last.decision == CampaignLook.Decision.BUDGET and last.added_ratings == 0
    assert Slot.objects.filter(job=crowd.job).count() <= 200


def _complete_first_round(job):
    """Rate the first round without running the hook (the test decides when the look runs)."""
    worker_pool, pairs = [], {}
    for i in range(2):
        worker_pool.append(Worker.objects.get_or_create(provider="inhouse", external_id=f"direct{i}")[0])
    while True:
        progressed = False
        for worker in worker_pool:
            slot = claim_next_slot(job=job, worker=worker)
            if slot is None:
                continue
            submit_response(slot_id=slot.pk, worker=worker, answers=_answers(slot.item_id, worker, pairs))
            progressed = True
        if not progressed:
            return


@pytest.mark.django_db
def test_the_round_hook_is_idempotent(tmp_path):
    crowd = _adaptive_campaign(tmp_path)
    job = crowd.job
    assert run_look(crowd.campaign_id) is None  # the first round is still collecting
    _complete_first_round(job)
    before = Item.objects.filter(job=job).count()
    first = run_look(crowd.campaign_id)
    again = run_look(crowd.campaign_id)
    assert first is not None and first.number == 1 and again is None
    assert CampaignLook.objects.filter(campaign=crowd.campaign).count() == 1
    if first.decision == CampaignLook.Decision.CONTINUE:
        assert Item.objects.filter(job=job).count() == before + first.added_ratings  # redundancy 1: one slot per item
        assert Slot.objects.filter(job=job, state=Slot.State.OPEN).count() == first.added_ratings


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_looks_add_one_round(tmp_path, monkeypatch):
    monkeypatch.setattr("evaluation.campaigns.services.adaptive.request_look", lambda campaign_id: None)  # the threads run the look
    crowd = _adaptive_campaign(tmp_path, name="adaptive-race")
    _complete_first_round(crowd.job)
    before = Slot.objects.filter(job=crowd.job).count()
    results, errors = [], []
    start = threading.Barrier(2)

    def look():
        try:
            start.wait()
            results.append(run_look(crowd.campaign_id))
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(repr(exc))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=look) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    done = [r for r in results if r is not None]
    assert len(done) == 1 and sum(r is None for r in results) == 1
    assert CampaignLook.objects.filter(campaign=crowd.campaign).count() == 1
    assert Slot.objects.filter(job=crowd.job).count() == before + done[0].added_ratings
    positions = list(Item.objects.filter(job=crowd.job).values_list("position", flat=True))
    assert len(positions) == len(set(positions))


@pytest.mark.django_db
@pytest.mark.parametrize(
    "values, message",
    [
        ({"confidence": 1.2}, "confidence must be a number from 0.5 to 0.999"),
        ({"confidence": "high"}, "confidence must be a number"),
        ({"top_k": 9}, "top k must be a whole number from 1 to the campaign's 4 ranked entries"),
        ({"budget": 0}, "budget must be a whole number of ratings of at least 1"),
        ({"round_size": 1}, "round size must be a whole number of instances of at least 2"),
        ({"adaptive": "yes"}, "adaptive must be true or false"),
    ],
)
def test_bad_settings_are_refused_with_a_message_and_nothing_written(tmp_path, values, message):
    test_set, entries = _write_test_set(tmp_path / "data")
    campaign = create_campaign("refused", test_set, entries)
    with pytest.raises(EvaluationInputError, match=message):
        set_adaptive(campaign, **values)
    campaign.refresh_from_db()
    assert campaign.adaptive is False and campaign.adaptive_confidence == 0.95


@pytest.mark.django_db
def test_settings_the_job_cannot_carry_are_refused_at_creation(tmp_path):
    test_set, entries = _write_test_set(tmp_path / "data")
    campaign = set_adaptive(create_campaign("too-big-round", test_set, entries), round_size=N_INSTANCES)
    with pytest.raises(EvaluationInputError, match="round size 200 is not smaller than the 200 instances rated"):
        create_crowd_job(campaign, redundancy=1)
    campaign = set_adaptive(create_campaign("tiny-budget", test_set, entries), round_size=ROUND, budget=100)
    with pytest.raises(EvaluationInputError, match="the first round alone needs 160 ratings"):
        create_crowd_job(campaign, redundancy=1)
    assert not CampaignJob.objects.exists() and not Job.objects.exists()


@pytest.mark.django_db
def test_settings_are_fixed_once_the_crowd_job_exists(tmp_path):
    crowd = _adaptive_campaign(tmp_path)
    with pytest.raises(EvaluationInputError, match="adaptive settings are fixed when the job is created"):
        set_adaptive(crowd.campaign, budget=10_000)


@pytest.mark.django_db
def test_page_shows_pair_states_spend_looks_and_why_it_stopped(tmp_path, make_annotator, django_capture_on_commit_callbacks, django_user_model):
    crowd = _adaptive_campaign(tmp_path, budget=600)
    _rate_until_no_work(crowd.job, [make_annotator("p1")[1], make_annotator("p2")[1]], django_capture_on_commit_callbacks)
    last = CampaignLook.objects.filter(campaign=crowd.campaign).latest("number")
    user = django_user_model.objects.create_user("organizer", password="organizer-pass-1")
    make_organizer(user)
    client = Client()
    client.force_login(user)
    page = client.get(reverse("evaluation:campaign-results", args=[crowd.campaign_id]))
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="adaptive"' in html
    for pair in last.pairs:
        expected = {"resolved": f"resolved: {pair['better']} ahead", "tied": "settled as a tie", "open": "still open"}[pair["state"]]
        assert f"{pair['a']} vs {pair['b']}" in html and expected in html
    # The budget counts responses (one rater's answers to every question), and the page says so,
    # with how many are in: it said "ratings" beside an API whose rating count is per question.
    from annotation.models import Slot

    submitted = Slot.objects.filter(job=crowd.job, state=Slot.State.SUBMITTED).count()
    assert f"Responses asked for: {last.ratings_spent} of the budget's {crowd.campaign.adaptive_budget}, {submitted} in" in html
    assert "A response is one rater's answers to every question" in html
    assert last.get_decision_display() in html
    assert f"critical value {last.critical_value:.3f}" in html
    # The note set the looks' critical value against the one-look value without giving it.
    one_look = NormalDist().inv_cdf(0.5 + crowd.campaign.adaptive_confidence / 2)
    assert f"against the one-look value {one_look:.3f} at {crowd.campaign.adaptive_confidence:.3f} confidence" in html


@pytest.fixture
def local_prolific():
    """Prolific's provider at an address on this machine, where spending needs no
    QUORUM_PROLIFIC_LIVE; no call is made (nothing runs the posting task)."""
    from hits import providers
    from hits.providers.prolific.provider import ProlificProvider

    with providers.override("prolific", ProlificProvider(api_url="http://127.0.0.1:9")) as provider:
        yield provider


def _crowd_campaign_on_prolific(tmp_path, budget_usd):
    """An adaptive campaign whose job runs on a paid crowd (Prolific's fees), launched: the first
    round's postings are reserved by the launch. Nothing reaches a provider: the posting task is
    queued on commit, and these tests do not run on-commit callbacks (`local_prolific`)."""
    from hits.services.config import configure_crowd

    test_set, entries = _write_test_set(tmp_path / "data")
    crowd = create_crowd_campaign(
        "adaptive-paid", test_set, entries, with_references=False, redundancy=1, order_seed=11, adaptive={"round_size": ROUND}
    )
    configure_crowd(crowd.job, provider="prolific", budget=budget_usd)
    launch_crowd_job(crowd.campaign)
    crowd.refresh_from_db()
    return crowd


@pytest.mark.django_db
def test_a_round_on_a_paid_crowd_is_reserved_through_the_posting_service_once(tmp_path, local_prolific):
    from hits.models import JobCrowdConfig, Posting

    crowd = _crowd_campaign_on_prolific(tmp_path, "1000.00")
    assert sum(Posting.objects.filter(job=crowd.job).values_list("assignments", flat=True)) == ROUND * len(QUALITY)
    _complete_first_round(crowd.job)
    look = run_look(crowd.campaign_id)
    assert look.decision == CampaignLook.Decision.CONTINUE and look.added_ratings > 0
    assert run_look(crowd.campaign_id) is None
    postings = Posting.objects.filter(job=crowd.job)
    # Every slot, the new round's included, is carried by exactly one reserved posting, within the budget.
    assert sum(postings.values_list("assignments", flat=True)) == Slot.objects.filter(job=crowd.job).count()
    assert sum(p.committed_cost for p in postings) == JobCrowdConfig.objects.get(job=crowd.job).committed
    assert postings.filter(state=Posting.State.INTENDED).count() == postings.count()


@pytest.mark.django_db
def test_a_round_the_money_budget_cannot_carry_stops_the_campaign_and_adds_nothing(tmp_path, local_prolific):
    from hits.models import JobCrowdConfig, Posting

    crowd = _crowd_campaign_on_prolific(tmp_path, "1000.00")
    config = JobCrowdConfig.objects.get(job=crowd.job)
    JobCrowdConfig.objects.filter(pk=config.pk).update(budget=config.committed)  # exactly the first round's cost
    _complete_first_round(crowd.job)
    items, postings = Item.objects.filter(job=crowd.job).count(), Posting.objects.filter(job=crowd.job).count()
    look = run_look(crowd.campaign_id)
    assert look.decision == CampaignLook.Decision.CROWD_BUDGET and look.added_ratings == 0
    assert Item.objects.filter(job=crowd.job).count() == items and Posting.objects.filter(job=crowd.job).count() == postings
    assert not CampaignItem.objects.filter(campaign=crowd.campaign).exclude(instance__in=crowd.round_order[:ROUND]).exists()


@pytest.mark.django_db
def test_reference_rows_are_rated_in_the_first_round_only(tmp_path, make_annotator, django_capture_on_commit_callbacks):
    test_set, entries = _write_test_set(tmp_path / "data")
    from evaluation.campaigns.services.imports import add_ground_truth_entry

    add_ground_truth_entry(test_set)
    crowd = create_crowd_campaign("adaptive-refs", test_set, entries, redundancy=1, order_seed=11, adaptive={"round_size": ROUND})
    launch_crowd_job(crowd.campaign)
    _rate_until_no_work(crowd.job, [make_annotator("q1")[1], make_annotator("q2")[1]], django_capture_on_commit_callbacks)
    truth = [e for e in crowd.campaign.entries.all() if e.is_ground_truth]
    assert truth and {p.instance for p in CampaignItem.objects.filter(campaign=crowd.campaign, entry=truth[0])} == set(crowd.round_order[:ROUND])
    assert all(truth[0].label not in (p["a"], p["b"]) for look in CampaignLook.objects.filter(campaign=crowd.campaign) for p in look.pairs)


@pytest.mark.django_db
def test_command_creates_an_adaptive_campaign_and_refuses_bad_settings(tmp_path):
    from io import StringIO

    from django.core.management import CommandError, call_command

    _write_test_set(tmp_path / "data")
    args = ["--challenge", "Adaptive challenge", "--test-set", "test", "--entries", ",".join(QUALITY), "--raters", "1", "--adaptive", "--round-size", "50"]
    with pytest.raises(CommandError, match="confidence must be a number from 0.5 to 0.999"):
        call_command("create_crowd_campaign", "cmd-bad", *args, "--confidence", "2")
    assert not Campaign.objects.filter(name="cmd-bad").exists()
    out = StringIO()
    call_command("create_crowd_campaign", "cmd-adaptive", *args, "--budget-ratings", "600", stdout=out)
    assert "adaptive: rounds of 50 instances, looks at [50, 100, 150, 200]" in out.getvalue()
    campaign = Campaign.objects.get(name="cmd-adaptive")
    assert campaign.adaptive and campaign.adaptive_budget == 600
    assert CampaignItem.objects.filter(campaign=campaign, entry__is_ground_truth=False, entry__is_baseline=False).count() == 50 * len(QUALITY)
