"""An automatic judge's verdicts on a pairwise job: imported all or nothing with bad rows named by
line, and prediction-powered rank sets of the win rates beside the human-only ones on the pairwise
page and its Markdown. (Their coverage by seeded simulation: tests/evaluation/test_ranksets.py.)"""
import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from evaluation.errors import EvaluationInputError
from evaluation.judges.selectors import pairwise_judge_rank_sets
from evaluation.judges.services import import_pairwise_verdicts
from evaluation.models import PairwiseJudgeRun, PairwiseJudgeVerdict
from tests.evaluation.test_pairwise import choose, pair, pairwise_job

pytestmark = pytest.mark.django_db

STRENGTH = {"strong": 3, "mid": 2, "weak": 1}
MATCHES = [("strong", "mid"), ("mid", "weak"), ("strong", "weak")]


def _job():
    return pairwise_job([pair(f"c{k}", *MATCHES[k % 3]) for k in range(12)], redundancy=1)


def _better(payload):
    a, b = payload["a"]["system"], payload["b"]["system"]
    return "a" if STRENGTH[a] > STRENGTH[b] else "b"


def _csv(text):
    return io.StringIO(text)


def _verdicts(upset=()):
    """The judge prefers the stronger output, except on the pairs in `upset`; a probability on some."""
    lines = ["pair,preferred,probability"]
    for k in range(12):
        a, b = MATCHES[k % 3]
        better = "a" if STRENGTH[a] > STRENGTH[b] else "b"
        verdict = ("b" if better == "a" else "a") if k in upset else better
        lines.append(f"{k},{verdict},{'0.8' if k % 2 else ''}")
    return "\n".join(lines) + "\n"


def test_a_good_file_is_stored_and_a_second_import_of_the_name_replaces_it():
    job = _job()
    run = import_pairwise_verdicts(job, _csv(_verdicts()), "gpt-judge")
    assert run.verdicts.count() == 12
    stored = {v.item.position: (v.preferred, v.probability) for v in run.verdicts.select_related("item")}
    assert stored[0] == ("a", None) and stored[1] == ("a", 0.8)
    import_pairwise_verdicts(job, _csv("pair,preferred\n0,tie\n"), "gpt-judge")
    assert PairwiseJudgeRun.objects.filter(job=job).count() == 1 and PairwiseJudgeVerdict.objects.count() == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("pair,winner\n0,a\n", "unknown column(s) winner; missing column(s) preferred; the header must be pair,preferred (optional: probability)"),
        ("pair,preferred\n0,a\n12,b\n", "line 3: pair '12' is not a pair of the job"),
        ("pair,preferred\n0,a\n1,left\n", "line 3: preferred 'left' is not a, b or tie"),
        ("pair,preferred,probability\n0,a,0.9\n1,b,0.3\n", "line 3: probability '0.3' is not a number from 0.5 to 1"),
        ("pair,preferred,probability\n0,tie,0.6\n", "line 2: a tie takes no probability"),
        ("pair,preferred\n0,a\n1,b\n0,b\n", "line 4: pair 0 is judged twice"),
        ("pair,preferred\n0,\n", "line 2: preferred is empty"),
        ("pair,preferred\n", "no verdicts"),
    ],
)
def test_a_bad_file_is_refused_with_its_line_and_nothing_is_stored(text, message):
    job = _job()
    import_pairwise_verdicts(job, _csv("pair,preferred\n0,a\n"), "kept")
    with pytest.raises(EvaluationInputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        import_pairwise_verdicts(job, _csv(text), "kept")
    assert [v.preferred for v in PairwiseJudgeVerdict.objects.all()] == ["a"]  # the earlier run of that name is untouched


def test_the_page_shows_prediction_powered_rank_sets_beside_human_only(make_annotator, client, organizer, django_capture_on_commit_callbacks):
    job = _job()
    user, worker = make_annotator("voter")
    with django_capture_on_commit_callbacks(execute=True):  # the stored ranking follows the votes
        for k in range(6):  # humans vote on the first six pairs; one upset so the votes vary
            choose(job, user, worker, lambda payload, k=k: "tie" if k == 4 else _better(payload))
    client.force_login(organizer)
    url = reverse("evaluation:pairwise-ranking", args=[job.pk])
    upload = SimpleUploadedFile("verdicts.csv", _verdicts(upset={7}).encode(), content_type="text/csv")
    with django_capture_on_commit_callbacks(execute=True):  # the import asks for the stored ranking again
        response = client.post(reverse("evaluation:pairwise-import-judge", args=[job.pk]), {"file": upload, "judge": "gpt-judge"})
    assert response.status_code == 302 and response["Location"].endswith(url + "#judge-rank-sets")
    page = client.get(url).content.decode()
    section = page[page.index('id="judge-rank-sets"'):]
    assert "Judge gpt-judge" in section and 'class="rank-sets"' in section
    assert "6 pairs with human votes and the judge's verdict, 6 with the judge's verdict only" in section
    assert "with probability at least 95%" in section
    [judged] = pairwise_judge_rank_sets(job)
    rows = judged["result"]["rows"]
    assert [row["system"] for row in rows][0] == "strong"  # it won every pair it was in, with humans and with the judge
    for row in rows:
        for sets in (row["ppi"], row["human_only"]):
            assert 1 <= sets["rank_low"] <= sets["rank_high"] <= 3
            assert f"<td>{row['system']}</td>" in section
    markdown = client.get(reverse("evaluation:pairwise-ranking-file", args=[job.pk, "md"])).content.decode()
    assert "## Rank sets with judge gpt-judge" in markdown and "with probability at least 95%" in markdown


def test_a_bad_upload_on_the_page_says_why_and_stores_nothing(client, organizer):
    job = _job()
    client.force_login(organizer)
    upload = SimpleUploadedFile("verdicts.csv", b"pair,preferred\n0,a\n1,maybe\n", content_type="text/csv")
    response = client.post(reverse("evaluation:pairwise-import-judge", args=[job.pk]), {"file": upload, "judge": "j"}, follow=True)
    assert "Nothing was imported: verdicts.csv line 3: preferred &#x27;maybe&#x27; is not a, b or tie" in response.content.decode()
    assert not PairwiseJudgeRun.objects.exists()


def test_without_votes_the_sets_say_why_they_are_not_computed(client, organizer, django_capture_on_commit_callbacks):
    job = _job()
    with django_capture_on_commit_callbacks(execute=True):  # the import asks for the stored ranking again
        import_pairwise_verdicts(job, _csv(_verdicts()), "gpt-judge")
    client.force_login(organizer)
    page = client.get(reverse("evaluation:pairwise-ranking", args=[job.pk])).content.decode()
    assert 'class="rank-sets-skipped"' in page and "at least two instances need human judgements" in page
