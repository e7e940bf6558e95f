"""Every organizer page fits its reader (issue 23): none is wider than a 390 px phone at a 390 px
viewport (wide tables scroll inside their own box), and none is taller than 5,000 px at 1280 wide
with default data — a job of 50 responses (the review queue's page), a campaign with its results,
a pairwise job, the team. The sizes are printed (`pytest -s`) and the screenshots of the review
queue's compact view and of the campaign page are saved to /tmp/shots/."""
from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotation.models import ImportRun, RunStatus
from tests.annotation.task_types.test_chat import CHAT
from tests.evaluation.conftest import DSTC9

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = Path("/tmp/shots")


@pytest.fixture
def default_data(make_annotator):
    """What a first-time organizer meets after a while: a rewrite job whose review queue holds 50
    responses by five annotators, some decided; a DSTC9 campaign with its results; a pairwise job."""
    from annotation.models import Response
    from annotation.services.claims import claim_next_slot, submit_response
    from annotation.services.payload_jobs import create_payload_job
    from annotation.services.review import bulk_decide
    from evaluation.campaigns.services.campaigns import compute_campaign_results, create_campaign
    from evaluation.campaigns.services.imports import import_human_eval, import_test_set
    from tests.factories import good_answers, make_corpus, make_live_job

    job = make_live_job(make_corpus(dialogs=50, user_turns=1), name="Restaurant rewrites")
    workers = [make_annotator(f"annotator{i}")[1] for i in range(5)]
    for n in range(50):
        worker = workers[n % 5]
        slot = claim_next_slot(job=job, worker=worker)
        submit_response(slot_id=slot.id, worker=worker, answers=good_answers(slot.item))
    some = Response.objects.filter(item__job=job).order_by("pk").values_list("pk", flat=True)[:5]
    bulk_decide(job, list(some), action="reject", reason="the area is lost in the paraphrase")
    test_set = import_test_set("DSTC9 Track 1", "test", DSTC9 / "labels.json", DSTC9 / "knowledge.json")
    campaign = create_campaign("human-eval", test_set, [])
    import_human_eval(campaign, DSTC9 / "human_eval")
    compute_campaign_results(campaign.pk, bootstrap=1000)
    pair = {"context": [{"speaker": "user", "text": "Hi"}], "a": {"system": "A", "text": "x"}, "b": {"system": "B", "text": "y"}}
    pairs = create_payload_job(name="Pairs", task_type="pairwise", payloads=[pair] * 10)
    chats = create_payload_job(name="Chats", task_type="chat", payloads=[CHAT] * 3)
    imported = ImportRun.objects.create(
        corpus_name=job.corpus.name, source_format="jsonl", corpus=job.corpus, status=RunStatus.SUCCEEDED, done=50, total=50,
    )
    return {"job": job, "campaign": campaign, "pairs": pairs, "chats": chats, "import": imported, "worker": workers[0], "test_set": test_set}


def _pages(data) -> list[str]:
    job, campaign, pairs = data["job"].pk, data["campaign"].pk, data["pairs"].pk
    return [
        "/organize/", "/organize/corpora/upload/", "/organize/jobs/new/", f"/organize/jobs/{job}/",
        f"/organize/jobs/{job}/review/", f"/organize/jobs/{job}/review/decisions/", f"/organize/jobs/{job}/preview/",
        f"/organize/jobs/{pairs}/", f"/organize/jobs/{pairs}/preview/", "/organize/team/", f"/organize/workers/{data['worker'].pk}/",
        "/evaluation/", f"/evaluation/{campaign}/", "/evaluation/systems/", f"/evaluation/pairwise/{pairs}/", "/evaluation/fed/",
        f"/evaluation/test-sets/{data['test_set'].pk}/interactive-leaderboard/", f"/organize/imports/{data['import'].pk}/",
        f"/evaluation/interactive/{data['chats'].pk}/", f"/organize/jobs/{data['chats'].pk}/preview/",
    ]


def _size(page) -> tuple[int, int]:
    width, height = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
    return width, height


def _measure(page, pages, width, which, shot) -> dict:
    """Each page's width (which=0) or height (which=1) at a viewport `width` px wide; `shot` is
    (page, file): that page's full screenshot is saved."""
    page.set_viewport_size({"width": width, "height": 900})
    sizes = {}
    for path in pages:
        page.goto(path)
        sizes[path] = _size(page)[which]
        if path == shot[0]:
            page.screenshot(path=str(SHOTS / shot[1]), full_page=True)
    return sizes


def _choose_compact(page, job):
    page.goto(f"/organize/jobs/{job.pk}/review/")
    page.locator("#view-compact").click()
    expect(page.locator("#review-compact")).to_be_visible()


def test_no_organizer_page_is_wider_than_a_phone_or_taller_than_5000_px(page, organizer_login, default_data):
    organizer_login("/organize/")
    expect(page.locator("#main h1").first).to_be_visible()
    SHOTS.mkdir(exist_ok=True)
    pages = _pages(default_data)

    campaign_page = f"/evaluation/{default_data['campaign'].pk}/"
    widths = _measure(page, pages, 390, 0, shot=(campaign_page, "campaign-page-390.png"))
    _choose_compact(page, default_data["job"])
    widths["review (compact)"] = _size(page)[0]
    heights = _measure(page, pages, 1280, 1, shot=(campaign_page, "campaign-page.png"))
    page.goto(f"/organize/jobs/{default_data['job'].pk}/review/")  # compact, as chosen above: remembered
    expect(page.locator("#review-compact tbody tr.review-row")).to_have_count(50)
    heights["review (compact)"] = _size(page)[1]
    page.screenshot(path=str(SHOTS / "review-compact.png"), full_page=True)
    page.locator("#view-full").click()  # the full cards, ten a page
    expect(page.locator("article.review-row")).to_have_count(10)
    heights["review (full cards)"] = _size(page)[1]
    page.screenshot(path=str(SHOTS / "review-full-cards.png"), full_page=True)
    print("PAGE WIDTHS at 390 px:", widths)
    print("PAGE HEIGHTS at 1280 px:", heights)

    assert {path: w for path, w in widths.items() if w > 390} == {}
    assert {path: h for path, h in heights.items() if h > 5000} == {}
    assert heights["review (compact)"] < 5000
