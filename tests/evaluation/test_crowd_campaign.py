"""Running a DSTC9 human evaluation as crowd work: the campaign's Likert job, raters' pages,
ratings from responses, and results from those ratings."""
import json

import numpy as np
import pandas as pd
import pytest
from django.db import IntegrityError, connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import Item, Job, Response, Slot
from annotation.services.claims import claim_next_slot
from annotation.work_tokens import make_token
from evaluation.campaigns.services.campaigns import compute_campaign_results
from evaluation.campaigns.services.crowd import (
    create_crowd_campaign,
    create_crowd_job,
    launch_crowd_job,
    record_response_ratings,
    sync_campaign_ratings,
)
from evaluation.errors import EvaluationInputError
from evaluation.models import Campaign, CampaignItem, CampaignJob, Entry, Rating
from evaluation.stats import scoring

from .crowd_data import IDENTITIES, KNOWLEDGE, SEEKING, make_test_set, rate_everything, rating_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def crowd(tmp_path):
    test_set, finalists = make_test_set(tmp_path / "data")
    crowd = create_crowd_campaign("dstc9-crowd", test_set, finalists, order_seed=7)
    launch_crowd_job(crowd.campaign)
    crowd.refresh_from_db()
    return crowd


def expected_pairs(campaign):
    pairs = set()
    for entry in campaign.entries.all():
        for i in SEEKING:
            if entry.outputs[i]["target"]:
                pairs.add((entry.label, i))
    return pairs


def test_campaign_from_finalists_rates_every_entry_and_reference_row_on_the_same_instances(crowd):
    campaign = crowd.campaign
    labels = {e.label for e in campaign.entries.all()}
    assert labels == {"team-alpha/sub-a1", "team-beta/sub-b7", "baseline-team/base-0", "reference-team/gold-entry"}
    kinds = {e.label: e.kind for e in campaign.entries.all()}
    assert kinds["baseline-team/base-0"] == "baseline" and kinds["reference-team/gold-entry"] == "ground_truth"

    pairs = {(p.entry.label, p.instance) for p in CampaignItem.objects.filter(campaign=campaign).select_related("entry__team")}
    assert pairs == expected_pairs(campaign)
    assert len(pairs) == 4 * 4 - 1  # team-beta gave no response on instance 2
    assert crowd.instances == SEEKING
    assert crowd.skipped == {"team-beta/sub-b7": [2]}

    job = crowd.job
    assert job.task_type == "likert" and job.state == Job.State.LIVE and job.redundancy == 3
    assert Item.objects.filter(job=job).count() == len(pairs)
    for item in Item.objects.filter(job=job):
        assert Slot.objects.filter(item=item).count() == 3
    assert Campaign.objects.get(pk=campaign.pk).state == Campaign.State.COLLECTING


def test_payloads_show_context_response_and_reference_knowledge_but_no_system(crowd):
    test_set = crowd.campaign.test_set
    for pair in CampaignItem.objects.filter(campaign=crowd.campaign).select_related("item", "entry__team"):
        payload = pair.item.payload
        assert set(payload) == {"context", "response", "knowledge"}
        assert payload["response"] == pair.entry.outputs[pair.instance]["response"]
        assert payload["context"][-1] == {"speaker": "user", "text": test_set.logs[pair.instance][-1]["text"]}
        ref = test_set.labels[pair.instance]["knowledge"][0]  # the ground truth's knowledge, whatever the entry selected
        doc = KNOWLEDGE["hotel"]["1"]["docs"][str(ref["doc_id"])]
        assert payload["knowledge"] == [{"entity": "Birch House", "title": doc["title"], "body": doc["body"]}]
        text = json.dumps(payload)
        assert not [name for name in IDENTITIES if name in text]


def test_items_are_offered_in_a_seeded_random_order(crowd, tmp_path):
    order = [
        (p.entry.label, p.instance)
        for p in CampaignItem.objects.filter(campaign=crowd.campaign).select_related("entry__team").order_by("item__position")
    ]
    assert order != sorted(order)  # not system by system
    runs = sum(1 for a, b in zip(order, order[1:], strict=False) if a[0] == b[0])
    assert runs < len(order) - 4  # one system's responses do not come in a block
    test_set, finalists = make_test_set(tmp_path / "again", name="crowd-test-2")
    again = create_crowd_campaign("dstc9-crowd-again", test_set, finalists, order_seed=7)
    order_again = [
        (p.entry.label, p.instance)
        for p in CampaignItem.objects.filter(campaign=again.campaign).select_related("entry__team").order_by("item__position")
    ]
    assert order_again == order  # the seed reproduces the order


def test_a_rater_never_rates_the_same_response_twice(crowd, make_annotator, django_capture_on_commit_callbacks):
    _user, worker = make_annotator("rita")
    met = rate_everything(crowd.job, worker, django_capture_on_commit_callbacks)
    assert len(met) == len(set(met)) == CampaignItem.objects.filter(campaign=crowd.campaign).count()
    assert claim_next_slot(job=crowd.job, worker=worker) is None
    # The database refuses a second slot of the same item for the same worker.
    item = Item.objects.get(pk=met[0])
    with pytest.raises(IntegrityError), transaction.atomic():
        slot = Slot.objects.filter(item=item, state=Slot.State.OPEN).first()
        slot.state, slot.worker = Slot.State.CLAIMED, worker
        slot.save()
    ratings = Rating.objects.filter(campaign=crowd.campaign, rater="inhouse:rita")
    assert ratings.count() == 2 * len(met)
    assert ratings.values("entry", "instance", "question").distinct().count() == ratings.count()


def test_the_work_page_shows_the_response_and_knowledge_and_no_system_name(crowd, make_annotator):
    user, worker = make_annotator("pat")
    client = Client()
    assert client.login(username="pat", password="pat-pass-1")
    slot = claim_next_slot(job=crowd.job, worker=worker)
    page = client.get(reverse("work", args=[make_token(slot)]))
    assert page.status_code == 200
    html = page.content.decode()
    payload = slot.item.payload
    assert payload["response"] in html and payload["knowledge"][0]["body"] in html
    assert payload["context"][0]["text"] in html
    assert html.count('type="radio" name="appropriateness"') == 5 and html.count('type="radio" name="accuracy"') == 5
    assert "Completely accurate: fully supported by the knowledge" in html and "Not appropriate at all" in html
    leaked = [name for name in IDENTITIES if name in html]
    assert not leaked, f"system identity on the rater's page: {leaked}"
    pair = CampaignItem.objects.get(item=slot.item)
    assert pair.entry.team.team_id not in html and pair.entry.entry_id not in html


def test_submitted_likert_answers_become_ratings_once(crowd, make_annotator, django_capture_on_commit_callbacks):
    _user, worker = make_annotator("sam")
    client = Client()
    assert client.login(username="sam", password="sam-pass-1")
    slot = claim_next_slot(job=crowd.job, worker=worker)
    refused = client.post(reverse("work", args=[make_token(slot)]), {"appropriateness": "4"})
    assert refused.status_code == 400 and "Accuracy: choose a rating from 1 to 5." in refused.content.decode()
    assert not Rating.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        saved = client.post(reverse("work", args=[make_token(slot)]), {"appropriateness": "4", "accuracy": "2"})
    assert saved.status_code == 302
    pair = CampaignItem.objects.get(item=slot.item)
    got = {(r.entry_id, r.instance, r.question, r.rater, r.value) for r in Rating.objects.filter(campaign=crowd.campaign)}
    assert got == {(pair.entry_id, pair.instance, "appropriateness", "inhouse:sam", 4), (pair.entry_id, pair.instance, "accuracy", "inhouse:sam", 2)}
    response = Response.objects.get(worker=worker)
    assert record_response_ratings(response) is None  # a re-sent signal adds nothing
    assert Rating.objects.count() == 2


@pytest.mark.postgres
def test_a_ratings_way_into_the_campaign_costs_four_statements(crowd, make_annotator):
    """Every counted rating of every campaign job becomes Rating rows inside the submit's transaction:
    the campaign item, the ratings already there, one insert, the campaign marked stale. (It was 11,
    a savepoint around each rating's insert among them.)"""
    _user, worker = make_annotator("quinn")
    client = Client()
    assert client.login(username="quinn", password="quinn-pass-1")
    slot = claim_next_slot(job=crowd.job, worker=worker)
    with CaptureQueriesContext(connection) as captured:
        saved = client.post(reverse("work", args=[make_token(slot)]), {"appropriateness": "5", "accuracy": "4"})
    assert saved.status_code == 302
    statements = [q["sql"] for q in captured.captured_queries]
    touching = [n for n, sql in enumerate(statements) if "evaluation_" in sql]
    ours = statements[touching[0] : touching[-1] + 1]  # from the campaign item's read to the campaign marked stale
    assert len(ours) <= 4, "\n".join(ours)
    assert Rating.objects.filter(campaign=crowd.campaign, rater="inhouse:quinn").count() == 2
    assert Campaign.objects.get(pk=crowd.campaign.pk).inputs_version == ""


def test_results_from_crowd_ratings_match_the_scoring_functions(crowd, make_annotator, django_capture_on_commit_callbacks):
    raters = [make_annotator(name)[1] for name in ("ann", "bob", "cy")]
    for worker in raters:
        rate_everything(crowd.job, worker, django_capture_on_commit_callbacks)
    assert not Slot.objects.filter(job=crowd.job).exclude(state=Slot.State.SUBMITTED).exists()  # 3 raters per item
    campaign = Campaign.objects.get(pk=crowd.campaign_id)
    assert campaign.rater_ids_known
    report = compute_campaign_results(campaign.pk).report

    # What the raters were asked to give, rebuilt from the test's own rule, not from the database.
    entries = list(campaign.entries.select_related("team").order_by("team__team_id", "entry_id"))
    rows = [
        (e.label, q, p.instance, w.external_id, rating_for(e.label, p.instance, w.external_id, q))
        for e in entries
        for p in CampaignItem.objects.filter(campaign=campaign, entry=e)
        for w in raters
        for q in campaign.questions
    ]
    ratings = pd.DataFrame(rows, columns=["system", "question", "instance", "rater", "value"])
    labels = [e.label for e in entries]
    truth = np.array([bool(x.get("target")) for x in campaign.test_set.labels])
    scores, _counts = scoring.instance_score_matrix(ratings, labels, campaign.questions, len(truth))
    cols = scoring.eq1_columns(scores, truth, [np.array([bool(o["target"]) for o in e.outputs]) for e in entries])
    point = scoring.system_scores(cols)
    by_system = {row["system"]: row for row in report["systems"]}
    for s, label in enumerate(labels):
        for q, question in enumerate(campaign.questions):
            assert by_system[label]["questions"][question]["score"] == pytest.approx(point["score"][s, q])
        assert by_system[label]["final"] == pytest.approx(point["final"][s])
        assert by_system[label]["n"] == len(CampaignItem.objects.filter(campaign=campaign, entry__team__team_id=label.split("/")[0]))

    # Eq. 1 by hand for team-beta (it missed instance 2): S_p over its 3 detections, S_r over 4 true turns.
    beta = "team-beta/sub-b7"
    means = [np.mean([rating_for(beta, i, w.external_id, "accuracy") for w in raters]) for i in (0, 1, 4)]
    p, r = sum(means) / 3, sum(means) / 4
    assert by_system[beta]["questions"]["accuracy"]["score"] == pytest.approx(2 * p * r / (p + r))
    assert by_system["reference-team/gold-entry"]["rank"] is None and by_system["baseline-team/base-0"]["rank"] is None
    assert by_system[beta]["rank"] in (1, 2)
    assert report["agreement"]["accuracy"]["raters"] is not None  # crowd raters are known by id


def test_ratings_follow_the_response_life_without_any_sync(crowd, make_annotator, django_capture_on_commit_callbacks):
    """A rating response rejected (here by a reviewer) takes its ratings off the leaderboard at once,
    and brings them back when accepted again: page, command and API read the same rows."""
    from annotation.services.quality import override_verdict

    _user, worker = make_annotator("vic")
    rate_everything(crowd.job, worker, django_capture_on_commit_callbacks)
    total = Rating.objects.filter(campaign=crowd.campaign).count()
    response = Response.objects.filter(worker=worker).first()
    override_verdict(response, status=Response.Status.REJECTED, reason="Rated without reading.", check="flags")
    assert Rating.objects.filter(campaign=crowd.campaign).count() == total - 2
    assert not Rating.objects.filter(campaign=crowd.campaign, rater__endswith=":vic", instance=response.item.evaluation_pair.instance, entry=response.item.evaluation_pair.entry).exists()
    override_verdict(response, status=Response.Status.ACCEPTED, reason="Checked again: fine.", check="flags")
    assert Rating.objects.filter(campaign=crowd.campaign).count() == total
    assert sync_campaign_ratings(crowd.campaign) == {"added": 0, "removed": 0}  # nothing left to repair


def test_ratings_written_behind_the_services_back_are_repaired_by_sync(crowd, make_annotator, django_capture_on_commit_callbacks):
    _user, worker = make_annotator("val")
    rate_everything(crowd.job, worker, django_capture_on_commit_callbacks)
    total = Rating.objects.filter(campaign=crowd.campaign).count()
    response = Response.objects.filter(worker=worker).first()
    Response.objects.filter(pk=response.pk).update(status=Response.Status.REJECTED)
    assert sync_campaign_ratings(crowd.campaign) == {"added": 0, "removed": 2}
    assert Rating.objects.filter(campaign=crowd.campaign).count() == total - 2
    Response.objects.filter(pk=response.pk).update(status=Response.Status.ACCEPTED)
    assert sync_campaign_ratings(crowd.campaign) == {"added": 2, "removed": 0}
    assert sync_campaign_ratings(crowd.campaign) == {"added": 0, "removed": 0}


def test_bad_campaign_requests_say_what_to_fix_and_write_nothing(tmp_path):
    test_set, finalists = make_test_set(tmp_path / "data", with_logs=False)
    with pytest.raises(EvaluationInputError, match="logs.json"):
        create_crowd_campaign("no-logs", test_set, finalists)
    assert not Campaign.objects.exists() and not Job.objects.exists()

    from evaluation.campaigns.services.imports import import_test_set_logs

    import_test_set_logs(test_set, tmp_path / "data" / "logs.json")
    with pytest.raises(EvaluationInputError, match="not knowledge-seeking"):
        create_crowd_campaign("bad-instances", test_set, finalists, instances=[0, 3])
    with pytest.raises(EvaluationInputError, match="indices from 0 to 5"):
        create_crowd_campaign("bad-instances", test_set, finalists, instances=[9])
    with pytest.raises(EvaluationInputError, match="no anchored wording for question 'fluency'"):
        create_crowd_campaign("bad-question", test_set, finalists, questions=["fluency"])
    with pytest.raises(EvaluationInputError, match="choose at least one finalist"):
        create_crowd_campaign("empty", test_set, [])
    assert not Campaign.objects.exists() and not Job.objects.exists()

    crowd = create_crowd_campaign("sampled", test_set, finalists, sample_size=2, sample_seed=3)
    assert len(crowd.instances) == 2 and set(crowd.instances) <= set(SEEKING)
    assert {p.instance for p in CampaignItem.objects.filter(campaign=crowd.campaign)} == set(crowd.instances)
    with pytest.raises(EvaluationInputError, match="already has a crowd job"):
        create_crowd_job(crowd.campaign)
    assert Entry.objects.filter(test_set=test_set, is_ground_truth=True).count() == 1
    assert CampaignJob.objects.count() == 1


def test_the_campaign_page_shows_crowd_progress(crowd, organizer, make_annotator, django_capture_on_commit_callbacks):
    _user, worker = make_annotator("una")
    done = rate_everything(crowd.job, worker, django_capture_on_commit_callbacks)
    client = Client()
    assert client.login(username="olga", password="organizer-pass-1")
    page = client.get(reverse("evaluation:campaign-results", args=[crowd.campaign_id]))
    assert page.status_code == 200
    html = page.content.decode()
    assert f"{len(done)} responses to rate on 4 instances, 3 raters each; {len(done)} of {3 * len(done)} ratings collected" in html
    assert "team-beta/sub-b7 on 1 instance" in html
