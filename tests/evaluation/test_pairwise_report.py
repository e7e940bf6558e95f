"""A pairwise job's ranking report, stored in the background (issue 26): the page, its downloads and
the API read the stored report without fitting anything; counted votes ask for a new one, debounced;
the page says how old the report is and follows a recomputation's progress."""
import html
import io
from datetime import timedelta

import pytest
from celery.app.task import Task
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from annotation.models import Response, RunStatus
from annotation.services.claims import claim_next_slot, submit_response
from annotation.services.jobs import launch_job
from annotation.services.payload_jobs import create_payload_job
from annotation.services.responses import transition
from evaluation.campaigns.services import pairwise
from evaluation.judges.services import import_pairwise_verdicts
from evaluation.models import PairwiseReport
from evaluation.stats import bradley_terry, fragility, ranksets, style
from quorum import background

pytestmark = pytest.mark.django_db

CONTEXT = [{"speaker": "user", "text": "Is there parking at the hotel?"}]
SYSTEMS = ["strong", "mid", "weak"]


def pair(instance, a, b):
    return {"context": CONTEXT, "instance": instance, "a": {"system": a, "text": f"{a} says {instance}"}, "b": {"system": b, "text": f"{b} answers {instance} at length."}}


def pairwise_job(contexts: int, name="pairs"):
    """Every pair of the three systems on `contexts` contexts, one vote each."""
    payloads = [pair(f"c{k}", a, b) for k in range(contexts) for i, a in enumerate(SYSTEMS) for b in SYSTEMS[i + 1:]]
    return launch_job(create_payload_job(name=name, task_type="pairwise", payloads=payloads, redundancy=1))


def vote(job, worker, n):
    """`n` votes of `worker`: the system earlier in SYSTEMS wins, except every fourth vote."""
    for k in range(n):
        slot = claim_next_slot(job=job, worker=worker)
        if slot is None:
            return
        winner = "b" if k % 4 == 3 else "a"
        submit_response(slot_id=slot.id, worker=worker, answers={"winner": winner, "left": "a" if k % 2 else "b"})


def computed(job) -> PairwiseReport:
    """The job's report, computed now as the task would."""
    report = pairwise.compute_report(pairwise.request_report(job, delay=0).pk)
    assert report is not None and report.status == RunStatus.SUCCEEDED, report and report.error
    return report


def refuse_to_fit(monkeypatch):
    """Every fit and search of the report fails the test: a request that reads the stored report never calls them."""
    fits = ((bradley_terry, "bootstrap"), (bradley_terry, "fit"), (fragility, "bt_leaderboard"), (style, "fit"), (style, "position_bias"),
            (ranksets, "pairwise_rank_sets"))
    for module, name in fits:
        monkeypatch.setattr(module, name, lambda *a, _name=name, **k: pytest.fail(f"{_name} called on a request"))


def test_votes_ask_for_one_report_started_after_the_delay(make_annotator, settings, monkeypatch, django_capture_on_commit_callbacks):
    settings.QUORUM_PAIRWISE_REPORT_DELAY_SECONDS = 45
    job = pairwise_job(2)
    queued = []
    monkeypatch.setattr(background, "runs_inline", lambda: False)  # as on a broker: the countdown is kept
    monkeypatch.setattr(Task, "apply_async", lambda self, args=None, countdown=None, **kw: queued.append((self.name, args, countdown)))
    with django_capture_on_commit_callbacks(execute=True):
        vote(job, make_annotator("ann")[1], 4)
    pending = PairwiseReport.objects.get(job=job)
    assert pending.status == RunStatus.PENDING
    assert queued == [("evaluation.tasks.compute_pairwise_report", (pending.pk,), 45)]  # four votes, one computation
    assert pairwise.compute_report(pending.pk).votes == 4  # it reads the votes when it starts
    assert pairwise.compute_report(pending.pk) is None  # a second delivery finds it taken


def test_the_page_downloads_and_api_read_the_stored_report_without_fitting(make_annotator, organizer, client, organizer_api, monkeypatch):
    job = pairwise_job(4)
    vote(job, make_annotator("ann")[1], 8)
    # A judge who prefers the system earlier in SYSTEMS on every pair, voted or not.
    import_pairwise_verdicts(job, io.StringIO("pair,preferred\n" + "".join(f"{k},a\n" for k in range(12))), "judge-1")
    report = computed(job)  # in the background
    refuse_to_fit(monkeypatch)
    client.force_login(organizer)
    page = client.get(reverse("evaluation:pairwise-ranking", args=[job.pk])).content.decode()
    assert 'id="ranking"' in page and 'id="pairwise-report-age"' in page and "from 8 counted votes" in page
    judges = page[page.index('id="judge-rank-sets"'):]
    assert "Judge judge-1" in judges and "8 pairs with human votes and the judge's verdict, 4 with the judge's verdict only" in judges
    assert [r["system"] for r in report.report["rows"]] == SYSTEMS  # the order the votes gave
    for system in SYSTEMS:
        assert system in page
    csv_text = client.get(reverse("evaluation:pairwise-ranking-file", args=[job.pk, "csv"])).content.decode()
    assert csv_text.splitlines()[0].startswith("rank,system,") and "\n1,strong," in csv_text
    markdown = client.get(reverse("evaluation:pairwise-ranking-file", args=[job.pk, "md"])).content.decode()
    assert "## Style-controlled ranking" in markdown and "## Position bias" in markdown
    body = organizer_api.get(reverse("evaluation-api:pairwise-ranking", args=[job.pk])).json()
    assert body["votes"] == 8 and [r["system"] for r in body["rows"]] == SYSTEMS and body["under_way"] is None
    assert [judged["name"] for judged in body["judge_sets"]] == ["judge-1"]
    assert body["controls"]["fragility"]["pairs"][0]["above"] == "strong" and 0 <= body["age_seconds"] < 60


def test_every_format_lists_one_tie_group_by_strength_as_the_fragility_table_reads_it(make_annotator, organizer, client, organizer_api):
    """The weakest system is named first in every pair it is in; a round robin of two votes per pair
    where (ties half) strong scores 3, mid 2.5 and weak 0.5 of 4: with equal games per pair
    Bradley-Terry orders by score, and six votes separate no pair, so all three share rank 1 and
    must still be listed strong, mid, weak, as the fragility table orders them."""
    votes = [("weak", "mid", "b"), ("weak", "mid", "tie"), ("weak", "strong", "b"), ("weak", "strong", "b"), ("mid", "strong", "b"), ("mid", "strong", "a")]
    job = launch_job(create_payload_job(name="weak first", task_type="pairwise", payloads=[pair(f"c{k}", a, b) for k, (a, b, _) in enumerate(votes)], redundancy=1))
    worker = make_annotator("ann")[1]
    for _ in votes:
        slot = claim_next_slot(job=job, worker=worker)
        winner = next(w for k, (_, _, w) in enumerate(votes) if slot.item.payload["instance"] == f"c{k}")
        submit_response(slot_id=slot.id, worker=worker, answers={"winner": winner, "left": "a"})
    body = computed(job).report
    expected = ["strong", "mid", "weak"]
    assert [r["rank"] for r in body["rows"]] == [1, 1, 1] and [r["system"] for r in body["rows"]] == expected
    pairs = body["controls"]["fragility"]["pairs"]
    assert [(p["above"], p["below"]) for p in pairs] == [("strong", "mid"), ("mid", "weak")]
    client.force_login(organizer)
    page = client.get(reverse("evaluation:pairwise-ranking", args=[job.pk])).content.decode()
    table = page[page.index('id="ranking"'):page.index("</table>", page.index('id="ranking"'))]
    assert [table.index(f"data-label=\"System\">{name}</td>") for name in expected] == sorted(table.index(f"data-label=\"System\">{name}</td>") for name in expected)
    assert "rows of one tie group share its rank" in page
    csv_text = client.get(reverse("evaluation:pairwise-ranking-file", args=[job.pk, "csv"])).content.decode()
    assert [line.split(",")[1] for line in csv_text.splitlines()[1:]] == expected
    markdown = client.get(reverse("evaluation:pairwise-ranking-file", args=[job.pk, "md"])).content.decode()
    listed = [line.split(" | ")[2] for line in markdown.splitlines() if line.startswith("| 1 | ")]
    assert listed[:3] == expected and "rows are listed by log-strength, strongest first" in markdown
    api = organizer_api.get(reverse("evaluation-api:pairwise-ranking", args=[job.pk])).json()
    assert [r["system"] for r in api["rows"]] == expected and "tie group" in api["row_order"]


def test_the_page_costs_the_same_queries_at_two_sizes(make_annotator, organizer, client):
    jobs = {}
    for contexts in (2, 8):
        job = pairwise_job(contexts, name=f"pairs {contexts}")
        vote(job, make_annotator(f"w{contexts}")[1], 3 * contexts)
        computed(job)
        jobs[contexts] = job
    client.force_login(organizer)
    counts = {}
    for contexts, job in jobs.items():
        url = reverse("evaluation:pairwise-ranking", args=[job.pk])
        client.get(url)  # warm: session, content types
        with CaptureQueriesContext(connection) as queries:
            assert client.get(url).status_code == 200
        counts[contexts] = len(queries)
    assert counts[2] == counts[8], counts


def test_new_votes_give_a_new_report_and_the_old_one_goes(make_annotator, organizer, client, django_capture_on_commit_callbacks):
    job = pairwise_job(3)
    worker = make_annotator("ann")[1]
    vote(job, worker, 5)
    first = computed(job)
    with django_capture_on_commit_callbacks(execute=True):  # in-process, the task runs at the commit
        vote(job, worker, 2)
    latest = PairwiseReport.objects.get(job=job)
    assert latest.pk != first.pk and latest.status == RunStatus.SUCCEEDED and latest.votes == 7
    client.force_login(organizer)
    assert "from 7 counted votes" in client.get(reverse("evaluation:pairwise-ranking", args=[job.pk])).content.decode()
    # A vote that stops counting is a change too.
    rejected = Response.objects.filter(item__job=job).order_by("pk").first()
    with django_capture_on_commit_callbacks(execute=True):
        transition(rejected, Response.Status.REJECTED, actor="reviewer", reason="clicked at random")
    assert PairwiseReport.objects.get(job=job).votes == 6


def test_the_page_shows_the_stored_report_its_age_and_the_recomputation_under_way(make_annotator, organizer, client):
    job = pairwise_job(3)
    worker = make_annotator("ann")[1]
    vote(job, worker, 4)
    computed(job)
    PairwiseReport.objects.filter(job=job).update(finished_at=timezone.now() - timedelta(hours=2))
    vote(job, worker, 1)  # in a test's transaction nothing is queued: the pending report waits
    pending = PairwiseReport.objects.get(job=job, status=RunStatus.PENDING)
    client.force_login(organizer)
    page = client.get(reverse("evaluation:pairwise-ranking", args=[job.pk])).content.decode()
    progress_url = reverse("evaluation:pairwise-report-progress", args=[job.pk, pending.pk])
    assert "2\xa0hours ago" in page and "from 4 counted votes" in page  # the stored report, with its age
    assert f'data-progress-url="{progress_url}"' in page and "waits to be computed" in page
    assert 'id="pairwise-compute"' not in page  # a computation is under way already
    state = client.get(progress_url).json()
    assert state["status"] == "pending" and not state["finished"] and "data-progress-url" in state["html"]
    pairwise.compute_report(pending.pk)
    state = client.get(progress_url).json()
    assert state["finished"] and "data-progress-url" not in state["html"] and "from 5 votes" in state["html"]
    page = client.get(reverse("evaluation:pairwise-ranking", args=[job.pk])).content.decode()
    assert "from 5 counted votes" in page and "data-progress-url" not in page


def test_votes_that_cannot_be_ranked_keep_the_last_report_and_say_why(make_annotator, organizer, client):
    payloads = [pair("c1", "a1", "b1"), pair("c2", "a1", "b1")]
    job = launch_job(create_payload_job(name="apart", task_type="pairwise", payloads=payloads + [pair("c3", "x", "y")], redundancy=2))
    ann, bob = make_annotator("ann")[1], make_annotator("bob")[1]
    for worker, winner in ((ann, "a"), (bob, "b")):
        for _ in range(2):
            slot = claim_next_slot(job=job, worker=worker)
            submit_response(slot_id=slot.id, worker=worker, answers={"winner": winner, "left": "a"})
    first = computed(job)  # a1 and b1 only so far: ranked
    slot = claim_next_slot(job=job, worker=ann)
    submit_response(slot_id=slot.id, worker=ann, answers={"winner": "a", "left": "a"})  # x against y: the graph falls apart
    failed = pairwise.compute_report(PairwiseReport.objects.get(job=job, status=RunStatus.PENDING).pk)
    assert failed.status == RunStatus.FAILED and "cannot be ranked" in failed.error
    client.force_login(organizer)
    page = client.get(reverse("evaluation:pairwise-ranking", args=[job.pk])).content.decode()
    assert 'id="ranking"' in page and f"from {first.votes} counted votes" in page and failed.error.split(":")[0] in page
    assert 'id="pairwise-compute"' in page


def test_the_api_answers_409_before_the_first_report_and_queues_one_on_post(make_annotator, organizer_api, django_capture_on_commit_callbacks):
    job = pairwise_job(2)
    vote(job, make_annotator("ann")[1], 3)
    url = reverse("evaluation-api:pairwise-ranking", args=[job.pk])
    assert organizer_api.get(url).status_code == 409
    with django_capture_on_commit_callbacks(execute=True):
        answer = organizer_api.post(url)
    assert answer.status_code == 202 and answer.json()["status"] == "queued"
    assert organizer_api.get(url).json()["votes"] == 3
    assert organizer_api.get(reverse("evaluation-api:pairwise-ranking", args=[999999])).status_code == 404


def test_the_sweep_queues_a_lost_report_again_and_fails_one_left_running(make_annotator, settings, monkeypatch):
    settings.QUORUM_RUN_DEADLINE_MINUTES = 10
    lost, stuck = pairwise_job(1, name="lost"), pairwise_job(1, name="stuck")
    waiting = pairwise.request_report(lost)
    running = PairwiseReport.objects.create(job=stuck, status=RunStatus.RUNNING, started_at=timezone.now() - timedelta(minutes=30))
    queued = []
    monkeypatch.setattr(pairwise, "queue_now", lambda name, *args: queued.append((name, *args)) or True)
    assert pairwise.settle_lost_reports() == {"requeued": 0, "failed": 1}  # the pending one is not overdue yet
    PairwiseReport.objects.filter(pk=waiting.pk).update(created_at=timezone.now() - timedelta(hours=1))
    assert pairwise.settle_lost_reports() == {"requeued": 1, "failed": 0}
    assert queued == [("evaluation.tasks.compute_pairwise_report", waiting.pk)]
    running.refresh_from_db()
    assert running.status == RunStatus.FAILED and "worker computing it was lost" in running.error


def test_the_page_and_the_markdown_say_the_same_of_ranks_and_style(make_annotator, organizer, client):
    """The page said its rank range was "the range of ranks across resamples" while the ranks come
    from Holm tie groups (`bradley_terry._holm_groups`), as the Markdown says; the style
    coefficient's p was on the page only."""
    from django.template.loader import render_to_string

    from evaluation.stats import pairwise_report, scoring

    job = pairwise_job(6)
    vote(job, make_annotator("ann")[1], 18)
    report = computed(job)
    client.force_login(organizer)
    page = html.unescape(client.get(reverse("evaluation:pairwise-ranking", args=[job.pk])).content.decode())
    assert "across resamples" not in page
    assert scoring.tie_group_rule() in page and scoring.rank_range_rule() in page
    markdown = client.get(reverse("evaluation:pairwise-ranking-file", args=[job.pk, "md"])).content.decode()
    assert scoring.tie_group_rule() in markdown
    # The style coefficient with its p, in the Markdown as on the page (`pairwise_ranking.html`).
    styled = {**report.report["controls"]["style"], "coefficients": [
        {"label": "length", "coefficient": 0.31234, "ci_low": 0.0512, "ci_high": 0.6021, "p": 0.0213},
        {"label": "bold", "coefficient": -0.2, "ci_low": -0.5, "ci_high": 0.1, "p": 0.0004},
    ]}
    lines = "\n".join(pairwise_report.controls_markdown({**report.report["controls"], "style": styled}))
    assert "0.312 [0.051, 0.602] per standard deviation (p = 0.021)." in lines
    assert "-0.200 [-0.500, 0.100] per standard deviation (p < 0.001)." in lines
    page_text = render_to_string("evaluation/pairwise_ranking.html", {
        "job": job, "stored": None, "rows": report.report["rows"], "controls": {**report.report["controls"], "style": styled},
        "row_order": "", "fragility": [], "judge_sets": [],
    })
    assert "per standard deviation (p = 0.021)" in page_text and "per standard deviation (p &lt; 0.001)" in page_text


def test_the_fragility_table_lists_each_pair_once_also_from_a_report_stored_before(make_annotator, organizer, client, organizer_api):
    """strong over mid is rank 1 (mid is the nearest challenger) and an adjacent pair: the page and the
    API listed it twice. One row names both places, also when the stored report kept the two rows."""
    job = pairwise_job(4)
    vote(job, make_annotator("ann")[1], 12)
    report = computed(job)
    board = report.report["controls"]["fragility"]
    assert (board["top"]["above"], board["top"]["below"]) == (board["pairs"][0]["above"], board["pairs"][0]["below"]) == ("strong", "mid")
    # As a report computed before the rows were merged stored them: rank 1 and the same pair again.
    old_rows = [{"place": "rank 1", **board["top"]}, *({"place": "adjacent", **pair} for pair in board["pairs"])]
    report.report = {**report.report, "controls": {**report.report["controls"], "fragility_rows": old_rows}}
    report.save(update_fields=["report"])
    client.force_login(organizer)
    page = client.get(reverse("evaluation:pairwise-ranking", args=[job.pk])).content.decode()
    table = page[page.index('id="fragility"'):page.index("</table>", page.index('id="fragility"'))]
    assert table.count("<td>strong</td><td>mid</td>") == 1 and "<td>rank 1, adjacent</td><td>strong</td><td>mid</td>" in table
    assert table.count("<td>mid</td><td>weak</td>") == 1
    rows = organizer_api.get(reverse("evaluation-api:pairwise-ranking", args=[job.pk])).json()["controls"]["fragility_rows"]
    assert [(row["place"], row["above"], row["below"]) for row in rows] == [("rank 1, adjacent", "strong", "mid"), ("adjacent", "mid", "weak")]
    markdown = client.get(reverse("evaluation:pairwise-ranking-file", args=[job.pk, "md"])).content.decode()
    assert [line.split(" | ")[:3] for line in markdown.splitlines() if "| strong | mid |" in line] == [["| rank 1, adjacent", "strong", "mid"]]
