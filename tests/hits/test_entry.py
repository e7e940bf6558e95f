"""What a crowd worker sees on arrival and on the way out, and who may frame those pages."""
from urllib.parse import urlencode

import pytest
from django.http import HttpResponse
from django.test import RequestFactory

from annotation.models import Slot, Worker
from hits.models import Posting, ProviderAssignment
from hits.services.blocks import block_worker
from hits.services.config import configure_crowd
from hits.services.postings import launch_crowd_job, post_job
from hits.web.framing import ProviderFramingMiddleware


@pytest.fixture
def mturk_job(fake_mturk, job_factory):
    job = job_factory(turns=3)
    configure_crowd(job, provider="mturk", budget="20", assignments_per_posting=3,
                    requirements={"block_qualification_id": "3BLOCKQUAL"})
    launch_crowd_job(job)
    post_job(job, concurrency=1)
    job.refresh_from_db()
    return job


def _entry(client, job, **params):
    return client.get(f"/crowd/mturk/{job.pk}/?{urlencode(params)}")


def _assert_framable_by_providers_only(response):
    policy = dict(part.strip().split(" ", 1) for part in response["Content-Security-Policy"].split(";"))
    ancestors = policy["frame-ancestors"].split()
    assert "https://workersandbox.mturk.com" in ancestors and "https://worker.mturk.com" in ancestors
    assert "https://app.prolific.com" in ancestors and "*" not in ancestors
    assert policy["script-src"] == "'self'"  # the site's policy still holds inside the provider's frame
    assert "X-Frame-Options" not in response


def test_preview_is_read_only_and_claims_nothing(mturk_job, client):
    hit = Posting.objects.filter(job=mturk_job).first().external_id
    response = _entry(client, mturk_job, assignmentId="ASSIGNMENT_ID_NOT_AVAILABLE", hitId=hit)
    assert response.status_code == 200
    body = response.content.decode()
    assert "preview" in body.lower() and "Rewrite the user" in body and "<form" not in body
    assert not Slot.objects.filter(job=mturk_job).exclude(state="open").exists()
    assert not ProviderAssignment.objects.exists()
    _assert_framable_by_providers_only(response)


def test_arrival_claims_a_slot_and_a_second_visit_gets_the_same_one(mturk_job, fake_mturk, client, work_tokens):
    hit = Posting.objects.filter(job=mturk_job).first().external_id
    assignment_id = fake_mturk.accept(hit, "A1ARRIVING")
    params = dict(assignmentId=assignment_id, hitId=hit, workerId="A1ARRIVING", turkSubmitTo="https://workersandbox.mturk.com")
    first = _entry(client, mturk_job, **params)
    second = _entry(client, mturk_job, **params)
    assert first.status_code == second.status_code == 302
    assert work_tokens.read_token(first["Location"].split("/")[2]) == work_tokens.read_token(second["Location"].split("/")[2])
    assert Slot.objects.filter(job=mturk_job, state="claimed").count() == 1
    _assert_framable_by_providers_only(first)


@pytest.mark.parametrize(
    "change, message",
    [
        ({"turkSubmitTo": "https://evil.example.com"}, "turkSubmitTo"),
        ({"workerId": ""}, "workerId"),
        ({"hitId": "3NOTAHITOFTHISJOB000000000000"}, "not (or no longer) part"),
    ],
)
def test_unusable_arrivals_are_refused_with_a_reason(mturk_job, fake_mturk, client, change, message):
    hit = Posting.objects.filter(job=mturk_job).first().external_id
    params = dict(assignmentId="3ASSIGNMENT000000000000000001", hitId=hit, workerId="A1X",
                  turkSubmitTo="https://workersandbox.mturk.com")
    params.update(change)
    response = _entry(client, mturk_job, **params)
    assert response.status_code == 400 and message in response.content.decode()
    assert not Slot.objects.filter(job=mturk_job).exclude(state="open").exists()


def test_blocked_worker_gets_no_work_and_mturk_is_told(mturk_job, fake_mturk, client):
    worker = Worker.objects.create(provider="mturk", external_id="A1BLOCKED")
    block_worker(worker=worker, job=mturk_job, kind="soft", reason="Copied the source turn")
    block_worker(worker=worker, kind="hard", reason="Spam answers on every task")
    assert fake_mturk.granted_qualifications["3BLOCKQUAL"] == {"A1BLOCKED": 1}
    assert "A1BLOCKED" in fake_mturk.worker_blocks
    hit = Posting.objects.filter(job=mturk_job).first().external_id
    response = _entry(client, mturk_job, assignmentId="3ASSIGNMENT000000000000000009", hitId=hit,
                      workerId="A1BLOCKED", turkSubmitTo="https://www.mturk.com")
    assert response.status_code == 400
    assert not Slot.objects.filter(worker=worker).exists()


def test_allow_list_keeps_others_out(fake_mturk, job_factory, client):
    job = job_factory(turns=1)
    configure_crowd(job, provider="mturk", budget="5", requirements={"allow_qualification_id": "3ALLOW", "allow_list": ["A1FRIEND"]})
    launch_crowd_job(job)
    post_job(job, concurrency=1)
    hit = Posting.objects.get(job=job).external_id
    response = _entry(client, job, assignmentId="3ASSIGNMENT000000000000000010", hitId=hit, workerId="A1STRANGER",
                      turkSubmitTo="https://www.mturk.com")
    assert response.status_code == 400 and "invited" in response.content.decode()


def test_no_work_left_says_so(fake_mturk, job_factory, client, work_tokens):
    job = job_factory(turns=1)
    configure_crowd(job, provider="mturk", budget="5", assignments_per_posting=1)
    launch_crowd_job(job)
    post_job(job, concurrency=1)
    hit = Posting.objects.get(job=job).external_id
    ok = _entry(client, job, assignmentId="3ASSIGNMENT000000000000000011", hitId=hit, workerId="A1FIRST",
                turkSubmitTo="https://www.mturk.com")
    late = _entry(client, job, assignmentId="3ASSIGNMENT000000000000000012", hitId=hit, workerId="A1SECOND",
                  turkSubmitTo="https://www.mturk.com")
    assert ok.status_code == 302 and late.status_code == 409 and "return it" in late.content.decode()


def test_forged_done_link_is_refused(client):
    response = client.get("/crowd/done/not-a-signed-token/")
    assert response.status_code == 400


def test_prolific_entry_without_parameters_is_a_preview(fake_prolific, job_factory, client):
    job = job_factory(turns=1)
    configure_crowd(job, provider="prolific", budget="5")
    response = client.get(f"/crowd/prolific/{job.pk}/")
    assert response.status_code == 200 and "preview" in response.content.decode().lower()


def test_a_job_is_entered_only_through_its_own_provider(fake_mturk, job_factory, client):
    job = job_factory(turns=1)
    configure_crowd(job, provider="mturk", budget="5")
    response = client.get(f"/crowd/prolific/{job.pk}/?PROLIFIC_PID=p1&STUDY_ID=s1&SESSION_ID=x1")
    assert response.status_code == 400 and "not offered" in response.content.decode()


@pytest.mark.parametrize("path, framed", [("/work/abc/", True), ("/crowd/done/x/", True), ("/organize/", False)])
def test_middleware_lets_providers_frame_worker_pages_only(path, framed):
    def view(request):
        response = HttpResponse("page")
        response["X-Frame-Options"] = "DENY"
        return response

    response = ProviderFramingMiddleware(view)(RequestFactory().get(path))
    if framed:
        _assert_framable_by_providers_only(response)
    else:
        assert response["X-Frame-Options"] == "DENY" and "Content-Security-Policy" not in response


def test_hits_decides_where_crowd_workers_go_after_a_submit():
    from annotation import extensions
    from hits.receivers import submit_redirect

    assert extensions.submit_redirects["mturk"] is submit_redirect
    assert extensions.submit_redirects["prolific"] is submit_redirect


def test_inhouse_entry_asks_to_sign_in_first(job_factory, client):
    job = job_factory(turns=1)
    response = client.get(f"/crowd/inhouse/{job.pk}/")
    assert response.status_code == 302 and "login" in response["Location"] and f"/crowd/inhouse/{job.pk}/" in response["Location"]
