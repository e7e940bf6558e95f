"""The crowd section of the organizer's job page, and its actions under /crowd/jobs/<id>/."""
import html
from decimal import Decimal as D

import pytest

from annotation.models import Job, Response, Worker
from hits.models import JobCrowdConfig, Payment, Posting, ProviderAssignment
from hits.services.config import configure_crowd
from hits.services.confirmation import confirm_assignment
from hits.services.entry import arrive
from hits.services.postings import launch_crowd_job, post_job
from tests.hits.conftest import ANSWERS
from tests.hits.contract import LONG_REJECTION, submit_response  # noqa: F401


@pytest.fixture(autouse=True)
def _project_urls(settings):
    settings.ROOT_URLCONF = "quorum.urls"  # the organizer pages live in the project's URLs


@pytest.fixture
def org_client(client, organizer):
    client.force_login(organizer)
    return client


def _page(client, job):
    response = client.get(f"/organize/jobs/{job.pk}/")
    assert response.status_code == 200
    return response.content.decode()


def _messages(response):
    return [str(m) for m in response.context["messages"]]


def _results(response):
    """What the crowd section says its last action did: shown in the section (where its actions send the
    organizer back to, #crowd), not among the messages at the top of the page, out of view."""
    body = response.content.decode()
    assert response.redirect_chain[-1][0].endswith("#crowd")
    if 'id="crowd-results"' not in body:
        return []
    section = body.split('id="crowd-results"', 1)[1].split("</ul>", 1)[0]
    lines = [html.unescape(li.split(">", 1)[1].split("</li>", 1)[0]) for li in section.split("<li")[1:]]
    assert not set(lines) & set(_messages(response)), "shown twice"
    return lines


ACTIONS = ["settings", "settle", "bonus"]


@pytest.mark.parametrize("action", ACTIONS)
def test_only_organizers_may_act(job_factory, client, make_annotator, action):
    job = job_factory()
    url = f"/crowd/jobs/{job.pk}/{action}/"
    anonymous = client.post(url, {"provider": "mturk", "budget": "1"})
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    user, _ = make_annotator("annie")
    client.force_login(user)
    assert client.post(url, {"provider": "mturk", "budget": "1"}).status_code == 403
    assert not JobCrowdConfig.objects.filter(job=job).exists()
    assert Job.objects.get(pk=job.pk).state == Job.State.DRAFT


@pytest.mark.parametrize("action", ACTIONS)
def test_actions_are_post_only(job_factory, org_client, action):
    job = job_factory()
    assert org_client.get(f"/crowd/jobs/{job.pk}/{action}/").status_code == 405


def test_page_shows_cost_with_fees_hourly_pay_and_spend(job_factory, org_client):
    job = job_factory(turns=20, redundancy=3, reward="0.50")
    configure_crowd(job, provider="mturk", budget="100", minutes_per_assignment="1.5", assignments_per_posting=9)
    body = _page(org_client, job)
    assert 'id="crowd"' in body
    assert "Amazon Mechanical Turk (sandbox)" in body
    assert "$100.00" in body
    # 60 assignments x (0.50 + 20% fee) in 7 HITs of up to 9
    assert "$36.00 for 60 assignments in 7 postings: $30.00 rewards + $6.00 fees" in body
    assert "$20.00 an hour at 1.5 minutes per assignment" in body
    assert "$0.00 ($100.00 of the budget left)" in body
    # Help texts are shown beside the fields.
    assert "10 or more raises MTurk&#x27;s fee from 20% to 40%" in body


def test_a_job_posted_within_its_budget_is_not_said_to_exceed_it(job_factory, org_client, fake_mturk):
    """After the launch the postings' cost is in the committed spend: the estimate is not counted twice."""
    job = job_factory(turns=20, redundancy=3, reward="0.50")
    configure_crowd(job, provider="mturk", budget="40", assignments_per_posting=9)  # the job costs 36.00
    assert "more than the budget allows" not in _page(org_client, job)
    launch_crowd_job(job)
    post_job(job, concurrency=1)
    body = _page(org_client, job)
    assert "$36.00 ($4.00 of the budget left)" in body
    assert "more than the budget allows" not in body


def test_the_job_page_sets_the_pay_at_the_time_taken_beside_the_estimate(job_factory, make_annotator, org_client):
    """The estimate's 2 minutes said $15 an hour; workers took 6 minutes a response, so $5 is what they earned."""
    from annotation.services.claims import claim_next_slot, submit_response
    from annotation.services.jobs import launch_job
    from tests.factories import good_answers

    job = launch_job(job_factory(turns=3, reward="0.50"))
    configure_crowd(job, provider="inhouse", minutes_per_assignment="2")
    page = _page(org_client, job)
    assert "$15.00 an hour at 2 minutes per assignment" in page and 'id="crowd-hourly-measured"' not in page
    for name in ("ann1", "ann2"):
        worker = make_annotator(name)[1]
        slot = claim_next_slot(job=job, worker=worker)
        submit_response(slot_id=slot.id, worker=worker, answers=good_answers(slot.item))
    Response.objects.filter(item__job=job).update(work_seconds=360)
    page = _page(org_client, job)
    assert "$5.00 an hour at the 6.0 minutes workers have taken" in page and "over 2 responses" in page


def test_page_without_crowd_settings_says_in_house_default(job_factory, org_client):
    job = job_factory()
    body = _page(org_client, job)
    assert "In-house" in body and "default; not set yet" in body
    assert not JobCrowdConfig.objects.filter(job=job).exists()  # showing the page writes nothing


def test_in_house_work_outside_the_ledger_is_said_so_not_called_none(job_factory, org_client, make_annotator):
    """A job launched without crowd settings: annotators work, no assignment records it; the section
    says so rather than "No worker has taken an assignment yet" under six responses."""
    from annotation.services.claims import claim_next_slot, submit_response
    from annotation.services.jobs import launch_job
    from tests.factories import good_answers

    job = launch_job(job_factory(turns=2))
    worker = make_annotator("ann1")[1]
    slot = claim_next_slot(job=job, worker=worker)
    submit_response(slot_id=slot.id, worker=worker, answers=good_answers(slot.item))
    body = _page(org_client, job)
    assert "No worker has taken an assignment yet" not in body
    assert "annotators have saved 1 response: they signed in and worked on a job launched without crowd settings" in body


def test_settings_form_saves_provider_budget_and_requirements(job_factory, org_client):
    job = job_factory()
    response = org_client.post(
        f"/crowd/jobs/{job.pk}/settings/",
        {"provider": "mturk", "budget": "12.50", "minutes_per_assignment": "2", "assignments_per_posting": "5", "review_hours": "48",
         "locales": "us, gb", "min_approval_rate": "95", "min_hits_approved": "", "prolific_filters": ""},
        follow=True,
    )
    assert "Crowd settings saved." in _results(response)
    config = JobCrowdConfig.objects.get(job=job)
    assert (config.provider, config.budget, config.assignments_per_posting, config.review_hours) == ("mturk", D("12.50"), 5, 48)
    # The page says when accepted work is paid, and that the builder may reject it until then.
    body = _page(org_client, job)
    assert "paid automatically 48 hours after its submission unless you reject it first" in body
    assert "always at least 12 hours before Amazon Mechanical Turk approves it by itself (3 days after submission)" in body
    assert config.requirements["locales"] == ["US", "GB"] and config.requirements["min_approval_rate"] == 95
    assert "min_hits_approved" not in config.requirements


@pytest.mark.parametrize(
    "change, field, reason",
    [
        ({"prolific_filters": "not json"}, "prolific_filters", "Write the value as JSON"),
        ({"provider": "prolific", "prolific_filters": '{"filter_id": "x"}'}, "prolific_filters", "a list of {filter_id"),
        ({"locales": "USA"}, "locales", "two-letter country codes"),
        ({"min_approval_rate": "101"}, "min_approval_rate", "a whole number from 0 to 100"),
        ({"assignments_per_posting": "0"}, "assignments_per_posting", "a whole number from 1 to 100"),
        ({"budget": ""}, "budget", "a crowd job needs a budget"),
        ({"review_hours": "-1"}, "review_hours", "greater than or equal to 0"),
        # The listing's time (a Prolific study's) past the job's claim timeout (30 minutes): the claim would lapse first.
        ({"minutes_per_assignment": "45"}, "minutes_per_assignment", "at most the job's claim timeout of 30 minutes"),
    ],
)
def test_bad_settings_say_what_to_fix_by_the_field_and_change_nothing(job_factory, org_client, change, field, reason):
    job = job_factory()
    configure_crowd(job, provider="mturk", budget="10")
    before = JobCrowdConfig.objects.get(job=job)
    data = {"provider": "mturk", "budget": "20", "minutes_per_assignment": "2", "assignments_per_posting": "9", "review_hours": "0",
            "locales": "US", "min_approval_rate": "90", "min_hits_approved": "", "prolific_filters": ""}
    response = org_client.post(f"/crowd/jobs/{job.pk}/settings/", {**data, **change})
    assert response.status_code == 400
    form = response.context["crowd_settings_form"]
    assert list(form.errors) == [field], form.errors
    assert reason.lower() in form.errors[field][0].lower()
    body = response.content.decode()
    assert 'id="crowd-settings-form"' in body and form.errors[field][0].replace("'", "&#x27;") in body
    after = JobCrowdConfig.objects.get(job=job)
    assert (after.budget, after.requirements) == (before.budget, before.requirements)


def test_launch_over_budget_is_refused_with_the_reason(job_factory, org_client):
    job = job_factory(turns=20, redundancy=3, reward="0.50")
    configure_crowd(job, provider="mturk", budget="35.99")
    assert "The job's Launch button, at the top of this page, posts every open slot to Amazon Mechanical Turk" in _page(org_client, job)
    response = org_client.post(f"/organize/jobs/{job.pk}/launch/", follow=True)
    assert any("36.00 USD with fees" in m and "35.99" in m for m in _messages(response))
    refusal = next(m for m in _messages(response) if "36.00 USD" in m)
    assert refusal.startswith("Not launched on Amazon Mechanical Turk: ") and refusal.endswith("raise the budget or post fewer.")
    assert Job.objects.get(pk=job.pk).state == Job.State.DRAFT
    assert not Posting.objects.filter(job=job).exists()


def test_launch_within_budget_goes_live_and_commits(job_factory, org_client):
    job = job_factory(turns=3, reward="0.50")
    configure_crowd(job, provider="mturk", budget="5")
    response = org_client.post(f"/organize/jobs/{job.pk}/launch/", follow=True)
    # The launch says what it reserved and when work is paid, not only "live" (annotation.extensions.launch_notes).
    (said,) = [m for m in _messages(response) if m.startswith("The job is now live.")]
    assert "$1.80 reserved on Amazon Mechanical Turk for 3 places, fees included" in said
    assert "paid automatically 24 hours after its submission unless you reject it first" in said
    assert Job.objects.get(pk=job.pk).state == Job.State.LIVE
    assert JobCrowdConfig.objects.get(job=job).committed == D("1.80")
    assert 'id="crowd-launch-note"' not in _page(org_client, job)  # a live job has nothing to launch
    Job.objects.filter(pk=job.pk).update(state=Job.State.PAUSED)
    assert "The job's Resume button, at the top of this page, posts every open slot" in _page(org_client, job)


@pytest.fixture
def submitted(job_factory, fake_mturk):
    """A posted MTurk job with three submitted assignments."""
    job = job_factory(turns=3, reward="0.50")
    configure_crowd(job, provider="mturk", budget="10", assignments_per_posting=3)
    launch_crowd_job(job)
    post_job(job, concurrency=1)
    job.refresh_from_db()
    hit = Posting.objects.get(job=job).external_id
    out = []
    for n in range(3):
        worker = f"A{n}WORKER"
        assignment_id = fake_mturk.accept(hit, worker)
        arrival = arrive(provider_key="mturk", job=job, params={
            "assignmentId": assignment_id, "hitId": hit, "workerId": worker,
            "turkSubmitTo": "https://workersandbox.mturk.com"})
        submit_response(slot_id=arrival.slot.pk, worker=arrival.assignment.worker, answers=ANSWERS)
        fake_mturk.submit(assignment_id)
        confirm_assignment(arrival.assignment.pk)  # what the prompt task or the reconciler does
        out.append(ProviderAssignment.objects.get(pk=arrival.assignment.pk))
    return job, out


def test_page_lists_assignments_and_payments_with_states(submitted, org_client):
    job, assignments = submitted
    body = _page(org_client, job)
    for a in assignments:
        assert a.external_id in body and f'value="{a.pk}"' in body
    assert body.count("Submitted") >= 3
    assert "Created at the provider" in body


def test_bulk_approve_and_reject_give_a_result_per_element(submitted, org_client, fake_mturk):
    job, (a, b, c) = submitted
    url = f"/crowd/jobs/{job.pk}/settle/"
    org_client.post(url, {"action": "approve", "assignments": [a.pk]})
    response = org_client.post(url, {"action": "reject", "assignments": [a.pk, b.pk], "message": LONG_REJECTION}, follow=True)
    lines = _results(response)
    assert f"Assignment {a.pk} not rejected: already approved; a settled assignment cannot be rejected." in lines
    assert f"Assignment {b.pk}: rejected (confirmed)." in lines
    assert "1 of 2 rejected." in lines
    assert fake_mturk.assignments[a.external_id]["AssignmentStatus"] == "Approved"
    assert fake_mturk.assignments[b.external_id]["AssignmentStatus"] == "Rejected"
    assert Response.objects.get(pk=b.response_id).status == Response.Status.REJECTED
    # Settled lines show on the page with their payment states.
    body = _page(org_client, job)
    assert "Approve $0.50: Confirmed" in body and "Reject $0.00: Confirmed" in body


def test_reject_without_message_is_refused_once_for_the_ticked_assignments(submitted, org_client):
    job, (a, b, c) = submitted
    response = org_client.post(f"/crowd/jobs/{job.pk}/settle/", {"action": "reject", "assignments": [a.pk, b.pk]}, follow=True)
    lines = _results(response)
    assert lines == ["Not rejected: a rejection needs a message for the worker. Nothing was recorded."]
    assert not Payment.objects.exists()


def test_soft_reject_pays_and_excludes_the_data(submitted, org_client, fake_mturk):
    job, (a, b, c) = submitted
    response = org_client.post(f"/crowd/jobs/{job.pk}/settle/", {"action": "soft_reject", "assignments": [c.pk]}, follow=True)
    assert f"Assignment {c.pk}: soft-rejected (confirmed)." in _results(response)
    assert fake_mturk.assignments[c.external_id]["AssignmentStatus"] == "Approved"
    assert Response.objects.get(pk=c.response_id).status == Response.Status.EXCLUDED


def test_bonus_in_bulk_is_paid_once_each_and_counted(submitted, org_client, fake_mturk):
    job, (a, b, c) = submitted
    committed = JobCrowdConfig.objects.get(job=job).committed
    data = {"assignments": [a.pk, b.pk], "amount": "0.25", "reason": "Careful work"}
    response = org_client.post(f"/crowd/jobs/{job.pk}/bonus/", data, follow=True)
    assert "2 of 2 paid a bonus." in _results(response)
    org_client.post(f"/crowd/jobs/{job.pk}/bonus/", data)  # the same bonus asked twice is one payment
    assert fake_mturk.bonuses_per_assignment() == {a.external_id: 1, b.external_id: 1}
    assert JobCrowdConfig.objects.get(job=job).committed == committed + 2 * D("0.30")


def test_assignments_of_another_job_are_refused(submitted, org_client, job_factory):
    job, (a, b, c) = submitted
    other = job_factory(name="other job")
    response = org_client.post(f"/crowd/jobs/{other.pk}/settle/", {"action": "approve", "assignments": [a.pk]}, follow=True)
    assert any("valid choice" in m for m in _results(response))
    assert not Payment.objects.exists()


def test_provider_text_is_escaped(submitted, org_client):
    job, (a, b, c) = submitted
    Worker.objects.filter(pk=a.worker_id).update(external_id="<script>alert(1)</script>")
    Posting.objects.filter(job=job).update(error='<img src=x onerror="alert(2)">')
    body = _page(org_client, job)
    assert "<script>alert(1)</script>" not in body and "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "<img src=x" not in body and "&lt;img src=x" in body


def test_a_closed_posting_says_when_its_unfilled_places_go_back(submitted, org_client, fake_mturk):
    from datetime import timedelta

    from django.utils import timezone

    from hits.services.reconcile import reconcile_job

    job, _ = submitted
    reconcile_job(job.pk, grace_seconds=0)  # every slot is submitted: the HIT closes
    page = _page(org_client, job)
    assert f"places never filled are given back once no worker can still be inside: {job.claim_timeout_minutes} minutes" in page
    reconcile_job(job.pk, grace_seconds=0, now=timezone.now() + timedelta(minutes=job.claim_timeout_minutes + 1))
    assert "(places never filled given back)" in _page(org_client, job)


def test_a_new_crowd_job_says_its_work_is_paid_after_a_day_to_review(job_factory, org_client):
    job = job_factory()
    configure_crowd(job, provider="prolific", budget="10")
    body = _page(org_client, job)
    assert (
        "Accepted work is paid automatically 24 hours after its submission unless you reject it first, always at least "
        "12 hours before Prolific approves it by itself (3 days after submission); change &#x27;Hours to review before "
        "paying&#x27; in the crowd settings." in body
    )


def test_one_minute_per_assignment_is_singular(job_factory, org_client):
    job = job_factory(reward="0.50")
    configure_crowd(job, provider="mturk", budget="10", minutes_per_assignment="1")
    assert "$30.00 an hour at 1 minute per assignment" in _page(org_client, job)


def test_the_section_tells_what_is_reserved_from_what_is_spent(submitted, org_client, fake_mturk):
    """Reserved: what the postings hold against the budget (three places at 0.50 + 20%). Spent: what MTurk
    has paid, fees included: one approved reward (0.50 + 0.10) and one bonus (0.25 + 0.05)."""
    from hits.selectors.crowd import crowd_overview

    job, (a, b, c) = submitted
    body = _page(org_client, job)
    assert "$1.80 reserved on Amazon Mechanical Turk for 3 places, fees included" in body
    assert 'id="crowd-spent">$0.00 ' in body
    org_client.post(f"/crowd/jobs/{job.pk}/settle/", {"action": "approve", "assignments": [a.pk]})
    org_client.post(f"/crowd/jobs/{job.pk}/bonus/", {"assignments": [b.pk], "amount": "0.25", "reason": "Careful work"})
    body = _page(org_client, job)
    assert 'id="crowd-committed">$2.10 ($7.90 of the budget left)' in body  # the bonus is reserved too
    assert (
        'id="crowd-spent">$0.90 <span class="muted">— what Amazon Mechanical Turk has paid: $0.50 rewards of 1 approved '
        "assignment + $0.25 bonuses + $0.15 fees" in body
    )
    assert crowd_overview(job)["spent"] == {"approved": 1, "rewards": "0.50", "bonuses": "0.25", "fees": "0.15", "total": "0.90"}


def test_a_refused_bonus_is_said_in_the_crowd_section_where_the_builder_is(submitted, org_client):
    job, (a, b, c) = submitted
    response = org_client.post(
        f"/crowd/jobs/{job.pk}/bonus/", {"assignments": [a.pk], "amount": "9.00", "reason": "Careful work"}, follow=True
    )
    lines = _results(response)
    assert "0 of 1 paid a bonus." in lines
    assert (
        f"Assignment {a.pk} not paid a bonus: a bonus of 9.00 USD costs 10.80 USD with fees; only 8.20 USD of the "
        "budget is left." in lines
    )
    assert _page(org_client, job).count('id="crowd-results"') == 0  # said once, not on every later visit


def test_a_claim_timeout_lowered_after_the_crowd_settings_is_caught_at_launch(job_factory, org_client):
    """Saving the crowd settings checks the minutes against the claim timeout; the builder can lower
    the claim timeout afterwards in the job's details, so the launch asks again and changes nothing."""
    job = job_factory(turns=3, reward="0.50")
    configure_crowd(job, provider="mturk", budget="5", minutes_per_assignment="20")
    Job.objects.filter(pk=job.pk).update(claim_timeout_minutes=10)
    response = org_client.post(f"/organize/jobs/{job.pk}/launch/", follow=True)
    (refusal,) = [m for m in _messages(response) if m.startswith("Not launched on Amazon Mechanical Turk")]
    assert "at most the job's claim timeout of 10 minutes" in refusal and "Lower the minutes per assignment" in refusal
    assert Job.objects.get(pk=job.pk).state == Job.State.DRAFT
    assert JobCrowdConfig.objects.get(job=job).committed == D("0") and not Posting.objects.filter(job=job).exists()


def test_a_bonus_to_a_rejected_worker_is_paid_and_said(submitted, org_client):
    """Allowed on purpose (a bonus can pay a rejected worker), but a builder who slipped should see it."""
    job, (a, b, c) = submitted
    reason = "Copied the source turn instead of rewriting it; the task asked for a paraphrase in your own words. " * 2
    org_client.post(f"/crowd/jobs/{job.pk}/settle/", {"assignments": [a.pk], "action": "reject", "message": reason}, follow=True)
    response = org_client.post(f"/crowd/jobs/{job.pk}/bonus/", {"assignments": [a.pk, b.pk], "amount": "0.25", "reason": "Thanks"}, follow=True)
    lines = _results(response)
    assert "2 of 2 paid a bonus." in lines
    assert f"Assignment {a.pk}: its work was rejected; the bonus is paid all the same (as a bonus can pay a rejected worker)." in lines
    assert not any(line.startswith(f"Assignment {b.pk}: its work was rejected") for line in lines)


def test_amounts_are_written_in_dollars_and_cents_with_thousands_separated(job_factory, org_client):
    # 368,250 slots at $0.50: the page read "$184125.00 for 368250 assignments" and a budget of "$200000".
    job = job_factory(turns=20, redundancy=3, reward="0.50")
    configure_crowd(job, provider="mturk", budget="200000")
    JobCrowdConfig.objects.filter(job=job).update(committed=D("8.5"))
    body = _page(org_client, job)
    assert "$200,000.00" in body
    assert "$8.50 ($199,991.50 of the budget left)" in body
