"""Pairwise comparison end to end: pairs from a payload file, workers choose on the real work page
without seeing system names, left/right drawn per worker and recorded, and the Bradley-Terry
ranking on the evaluation page, in CSV/Markdown and from the command."""
import io
import json
import math

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from annotation.models import Job, PayloadSet, Response
from annotation.services.claims import claim_next_slot
from annotation.services.jobs import JobError, launch_job
from annotation.services.payload_jobs import create_payload_job
from annotation.task_types.pairwise import left_side
from annotation.work_tokens import make_token
from evaluation.campaigns import selectors
from evaluation.campaigns.services.pairwise import build_report, compute_report, request_report
from evaluation.stats import bradley_terry

pytestmark = pytest.mark.django_db

CONTEXT = [{"speaker": "user", "text": "Can I bring my dog to the hotel?"}]


def text_of(system, instance):
    """An output's text, which must not give its system away: a code only the test can read."""
    return f"Reply {sum(map(ord, system)) % 997} to {instance}."


def pair(instance, a, b):
    return {"context": CONTEXT, "instance": instance, "a": {"system": a, "text": text_of(a, instance)}, "b": {"system": b, "text": text_of(b, instance)}}


def pairwise_job(payloads, redundancy=3):
    return launch_job(create_payload_job(name="pairs", task_type="pairwise", payloads=payloads, redundancy=redundancy))


def choose(job, user, worker, pick):
    """The worker claims the next pair on the real page and picks by system name (`pick(payload)`
    returns "a", "b" or "tie"); returns the stored response and the page's HTML."""
    client = Client()
    client.force_login(user)
    slot = claim_next_slot(job=job, worker=worker)
    url = reverse("work", args=[make_token(slot)])
    html = client.get(url).content.decode()
    left = left_side(job.pk, slot.item_id, worker.pk)
    assert client.post(url, {"winner": pick(slot.item.payload), "left": left}).status_code == 302
    return Response.objects.get(slot=slot), html


def test_a_pair_from_one_system_is_refused_and_nothing_is_written():
    with pytest.raises(JobError, match="two different systems"):
        create_payload_job(name="p", task_type="pairwise", payloads=[pair("i1", "x", "y"), pair("i2", "x", "x")])
    assert not Job.objects.exists() and not PayloadSet.objects.exists()


def test_workers_never_see_system_names_and_the_order_is_drawn_per_worker(make_annotator):
    job = pairwise_job([pair(f"i{k}", "alpha-sys", "beta-sys") for k in range(6)], redundancy=1)
    user, worker = make_annotator("pat")
    for _ in range(6):
        response, html = choose(job, user, worker, lambda p: "a")
        assert "alpha-sys" not in html and "beta-sys" not in html
        assert "Response 1" in html and "Response 2" in html
        # The text shown first is the output the response records as left.
        instance = response.item.payload["instance"]
        first, second = html.index('id="candidate-1"'), html.index('id="candidate-2"')
        alpha_at = html.index(text_of("alpha-sys", instance))
        shown_first = "alpha-sys" if first < alpha_at < second else "beta-sys"
        recorded = response.item.payload[response.answers["left"]]["system"]
        assert shown_first == recorded
        # The order shown is this worker's own draw for this item.
        assert response.answers["left"] == left_side(job.pk, response.item_id, worker.pk)
    # Both orders occur across items and workers (ids here depend on what ran before, so the six
    # draws above may all fall one way: 1 in 32; the coin is checked on many ids instead).
    draws = [left_side(job.pk, item, w) for item in range(100) for w in range(5)]
    assert 0.4 < draws.count("a") / len(draws) < 0.6


def test_the_ranking_is_bradley_terry_of_the_counted_choices(make_annotator):
    # Three systems; "strong" beats the others, "mid" beats "weak"; one tie.
    payloads = [pair("c1", "strong", "mid"), pair("c2", "strong", "weak"), pair("c3", "mid", "weak")]
    job = pairwise_job(payloads, redundancy=2)
    winners = {("strong", "mid"): "a", ("strong", "weak"): "a", ("mid", "weak"): "a"}
    for n in range(2):
        user, worker = make_annotator(f"judge{n}")
        for _ in range(3):
            choose(job, user, worker, lambda p, n=n: "tie" if (n, p["a"]["system"]) == (1, "mid") else winners[(p["a"]["system"], p["b"]["system"])])
    comparisons = selectors.pairwise_comparisons(job)
    assert sorted(comparisons) == sorted([
        ("strong", "mid", "a", "c1"), ("strong", "mid", "a", "c1"), ("strong", "weak", "a", "c2"), ("strong", "weak", "a", "c2"),
        ("mid", "weak", "a", "c3"), ("mid", "weak", "tie", "c3"),
    ])
    ranked = build_report(job, n_resamples=200, seed=7)["rows"]
    expected = bradley_terry.fit(comparisons)
    by_system = {row["system"]: row for row in ranked}
    assert [row["system"] for row in ranked] == ["strong", "mid", "weak"]
    assert [row.rank for row in sorted(expected.per_system, key=lambda r: r.rank)] == [1, 2, 3]  # the point order
    # Six comparisons draw no line with family-wise control (mid is told apart from neither): one
    # tie group; strong beats weak, so strong cannot be last, nor weak first (its range starts after the group's rank).
    assert [by_system[s]["rank"] for s in ("strong", "mid", "weak")] == [1, 1, 1]
    assert by_system["strong"]["rank_high"] == 2 and by_system["weak"]["rank_low"] == 2
    assert all(row["rank"] <= row["rank_low"] <= row["rank_high"] for row in by_system.values())
    for system, strength in zip(expected.systems, expected.log_strength, strict=False):
        assert math.isclose(by_system[system]["log_strength"], strength, abs_tol=1e-9)
    assert by_system["mid"]["ties"] == 1 and by_system["weak"]["losses"] == 3


def test_page_downloads_and_command_agree(make_annotator, client, organizer, django_capture_on_commit_callbacks):
    job = pairwise_job([pair("c1", "strong", "weak"), pair("c2", "strong", "weak")], redundancy=1)
    user, worker = make_annotator("judge")
    with django_capture_on_commit_callbacks(execute=True):  # the stored ranking follows the votes
        for _ in range(2):
            choose(job, user, worker, lambda p: "a")
    client.force_login(organizer)
    assert reverse("evaluation:pairwise-ranking", args=[job.pk]) in client.get(reverse("evaluation:campaigns")).content.decode()
    page = client.get(reverse("evaluation:pairwise-ranking", args=[job.pk])).content.decode()
    assert 'id="ranking"' in page and "strong" in page
    csv_text = client.get(reverse("evaluation:pairwise-ranking-file", args=[job.pk, "csv"])).content.decode()
    assert csv_text.splitlines()[0].startswith("rank,system,") and "\n1,strong," in csv_text
    out = io.StringIO()
    call_command("rank_pairwise", str(job.pk), "--format", "csv", stdout=out)
    assert out.getvalue() == csv_text  # same seed, same numbers
    with pytest.raises(CommandError, match="No pairwise comparison job"):
        call_command("rank_pairwise", "999999")


def test_only_organizers_see_the_ranking(make_annotator, client):
    job = pairwise_job([pair("c1", "x", "y")], redundancy=1)
    user, _worker = make_annotator("nosy")
    client.force_login(user)
    assert client.get(reverse("evaluation:pairwise-ranking", args=[job.pk])).status_code == 403


@pytest.mark.django_db
def test_create_job_makes_a_pairwise_job_from_a_payload_file_and_names_bad_lines(tmp_path):
    from django.core.management import CommandError, call_command

    from annotation.models import Job

    pair = {"context": [{"speaker": "user", "text": "Hi"}], "a": {"system": "A", "text": "x"}, "b": {"system": "B", "text": "y"}}
    path = tmp_path / "pairs.jsonl"
    path.write_text(json.dumps(pair) + "\n\n" + json.dumps({"a": 1}) + "\n")
    with pytest.raises(CommandError, match="pairs.jsonl line 3"):
        call_command("create_job", "--task-type", "pairwise", "--payloads", str(path), "--name", "pairs")
    path.write_text(json.dumps(pair) + "\n" + json.dumps(pair) + "\n")
    call_command("create_job", "--task-type", "pairwise", "--payloads", str(path), "--name", "pairs")
    assert Job.objects.get(name="pairs").items.count() == 2


def test_the_page_shows_position_bias_style_control_and_fragility(make_annotator, client, organizer):
    # Workers who always take the output shown on the left: the page must say the left side won
    # every decided comparison, and that the test of 1/2 rejects.
    systems = ["sys-a", "sys-b", "sys-c"]
    payloads = [pair(f"c{k}", systems[k % 3], systems[(k + 1) % 3]) for k in range(9)]
    job = pairwise_job(payloads, redundancy=2)
    chosen = 0
    for n in range(2):
        user, worker = make_annotator(f"lefty{n}")
        for _ in range(9):
            slot = claim_next_slot(job=job, worker=worker)
            left = left_side(job.pk, slot.item_id, worker.pk)
            c = Client()
            c.force_login(user)
            assert c.post(reverse("work", args=[make_token(slot)]), {"winner": left, "left": left}).status_code == 302
            chosen += 1
    compute_report(request_report(job, delay=0).pk)  # what the background does once the votes are in
    client.force_login(organizer)
    page = client.get(reverse("evaluation:pairwise-ranking", args=[job.pk])).content.decode()
    bias = page[page.index('id="position-bias"'):]
    assert f"chosen in {chosen} of {chosen} decided comparisons: 1.000" in bias
    assert "p &lt; 0.001" in bias  # written as the Markdown writes it (quorum.numbers)
    assert 'id="style-ranking"' in page or 'id="style-error"' in page
    table = page[page.index('id="fragility"'):]
    assert "rank 1" in table and "votes" in page[page.index("<h2>Fragility</h2>"):page.index('id="fragility"')]
    markdown = client.get(reverse("evaluation:pairwise-ranking-file", args=[job.pk, "md"])).content.decode()
    assert f"chosen in {chosen} of {chosen} decided comparisons (1.000, 95% Clopper-Pearson interval [" in markdown and "## Fragility" in markdown
    assert "exact binomial test of 1/2, p < 0.001" in markdown and "exact binomial test of 1/2, p &lt; 0.001" in bias
    out = io.StringIO()
    call_command("rank_pairwise", str(job.pk), stdout=out)
    assert out.getvalue() == markdown  # the command writes what the page offers
