"""The job page and the worker page show the stored reliability (issue 22); computing it is the flag run's."""
import pytest

from annotation.services.quality import apply_flags

from .test_reliability_sweep import _run, crowd  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db


def test_job_and_worker_pages_show_reliability_after_the_flag_run(client, organizer, crowd):  # noqa: F811
    job, vote_job = _run(crowd)
    client.force_login(organizer)
    before = client.get(f"/organize/jobs/{job.pk}/").content.decode()
    assert "No model yet" in before
    apply_flags(vote_job)
    apply_flags(job)
    page = client.get(f"/organize/jobs/{job.pk}/").content.decode()
    assert 'id="reliability"' in page and "Spammer score" in page and str(crowd["yes_man"]) in page
    assert ">writer<" in page and ">voter<" in page
    # The spammer score leads, with how to read a high accuracy beside a score near 0.
    assert page.index("<th>Spammer score</th>") < page.index("<th>Accuracy / usable</th>")
    assert 'id="reliability-reading"' in page and "says yes to everything" in page
    worker_page = client.get(f"/organize/workers/{crowd['yes_man'].pk}/").content.decode()
    assert "Reliability" in worker_page and ">voter<" in worker_page
    writer_page = client.get(f"/organize/workers/{crowd['careless'].pk}/").content.decode()
    assert ">writer<" in writer_page and "voted_down" in writer_page
    vote_page = client.get(f"/organize/workers/{crowd['yes_man'].pk}/").content.decode()
    assert "unreliable_voter" in vote_page and "spammer score" in vote_page


def test_the_job_pages_queries_do_not_grow_with_the_stored_model(client, organizer, crowd):  # noqa: F811
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    small, small_votes = _run(crowd, dialogs=10)  # both with a flagged writer: the same sections filled
    big, big_votes = _run(crowd, dialogs=16)
    for job in (small_votes, small, big_votes, big):
        apply_flags(job)
    client.force_login(organizer)
    counts = {}
    for name, job in (("small", small), ("big", big)):
        client.get(f"/organize/jobs/{job.pk}/")  # warm the session
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(f"/organize/jobs/{job.pk}/").status_code == 200
        counts[name] = len(ctx.captured_queries)
    assert counts["small"] == counts["big"], counts


def test_the_api_serves_the_stored_reliability(organizer_api, crowd):  # noqa: F811
    job, vote_job = _run(crowd, dialogs=10)
    assert organizer_api.get(f"/api/jobs/{job.pk}/reliability/").json() == []
    apply_flags(vote_job)
    rows = organizer_api.get(f"/api/jobs/{job.pk}/reliability/").json()
    yes_man = next(r for r in rows if r["worker"].endswith(crowd["yes_man"].external_id) and r["role"] == "voter")
    assert yes_man["spammer_score"] < 0.2 and yes_man["job_id"] == vote_job.pk
    assert {r["role"] for r in rows} == {"voter", "writer"}
