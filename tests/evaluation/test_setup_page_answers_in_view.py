"""The Evaluation page as a first-time organizer meets it: what a form answers is where the eye is.

The page is long (campaigns, interactive, pairwise, then the set-up forms and the finalists), so a
refused upload or finalist selection that answered at the top of the page showed nothing there:
the error sat a screen or two below. Each form posts to its own place on the page (the browser
scrolls to the fragment of the answer's address), the finalists table scrolls inside its card rather
than widening the page, and the results page names its leaderboard. Wide tables scroll by keyboard."""
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from evaluation.campaigns.services.campaigns import compute_campaign_results
from evaluation.campaigns.services.imports import import_entries

from .conftest import DSTC9

pytestmark = pytest.mark.django_db


@pytest.fixture
def signed_in(client, organizer):
    client.force_login(organizer)
    return client


@pytest.fixture
def scored(test_set):
    """The test set with its entries and their published scores (every value from the score file)."""
    import_entries(test_set, DSTC9 / "entries", scores_path=DSTC9 / "score.csv")
    return test_set


def form_action(page: str, form_id: str) -> str:
    match = re.search(rf'<form method="post" action="([^"]*)"[^>]*id="{form_id}"', page)
    assert match, f"no form {form_id}"
    return match.group(1)


def element(page: str, element_id: str, tag: str) -> str:
    start = page.index(f'id="{element_id}"')
    return page[start:page.index(f"</{tag}>", start)]


@pytest.mark.parametrize(
    "url_name, form_id, data",
    [
        ("evaluation:test-set-upload", "test-set-form", {"challenge": "DSTC9 Track 1", "name": "again"}),
        ("evaluation:entries-upload", "entries-form", {"archive": SimpleUploadedFile("e.zip", b"not a zip")}),
        ("evaluation:test-set-logs-upload", "logs-form", {"logs": SimpleUploadedFile("l.json", b"[")}),
    ],
)
def test_a_refused_upload_answers_at_its_form(signed_in, test_set, url_name, form_id, data):
    page = signed_in.post(reverse(url_name), {"test_set": test_set.pk, **data})
    html = page.content.decode()
    assert page.status_code == 400
    # The answer's address ends in the form's fragment, so the browser shows the form with its error.
    assert form_action(html, form_id) == f"{reverse(url_name)}#{form_id}"
    assert 'class="errorlist' in element(html, form_id, "form")


def test_a_refused_finalist_selection_answers_at_the_finalists(signed_in, scored):
    html = signed_in.post(reverse("evaluation:campaigns"), {"test_set": scored.pk, "metrics": "bleu", "top": "2"}).content.decode()
    assert form_action(html, "finalists-form") == reverse("evaluation:campaigns") + "#finalists"
    assert "unknown metric(s): bleu" in element(html, "finalists", "section")


def test_the_unknown_metric_refusal_lists_the_metrics_as_the_help_does(signed_in, scored):
    html = signed_in.post(reverse("evaluation:campaigns"), {"test_set": scored.pk, "metrics": "bleu", "top": "2"}).content.decode()
    available = re.search(r"unknown metric\(s\): bleu; available: ([^<]*)<", html).group(1).split(", ")
    helped = re.search(r'id="metrics-help">[^<]*Available: ([^<]*)\.</p>', html).group(1).split(", ")
    assert available == helped == sorted(helped)


def test_finalists_from_one_score_file_say_so_once_and_scroll_in_their_card(signed_in, scored):
    html = signed_in.post(
        reverse("evaluation:campaigns"), {"test_set": scored.pk, "metrics": "detection_f1, selection_r@1", "top": "2"}
    ).content.decode()
    assert "Every metric's value below is from the uploaded score file." in html
    table = element(html, "finalist-table", "table")
    assert "uploaded score file" not in table  # not once more in every cell
    wrapper = html[html.rindex("<div", 0, html.index('id="finalist-table"')):html.index('id="finalist-table"')]
    assert 'class="table-wrap"' in wrapper and 'tabindex="0"' in wrapper


def test_the_results_page_names_its_leaderboard(signed_in, campaign):
    compute_campaign_results(campaign.pk)
    html = signed_in.get(reverse("evaluation:campaign-results", args=[campaign.pk])).content.decode()
    assert '<h2 id="leaderboard-title">Leaderboard</h2>' in html
    assert '<table id="leaderboard" aria-labelledby="leaderboard-title">' in html


def test_the_objective_scores_table_scrolls_by_keyboard_too(signed_in, scored):
    """Fifteen metric columns overflow the card; a scroll box that cannot take focus cannot be
    scrolled from the keyboard (axe-core: scrollable-region-focusable)."""
    html = signed_in.get(reverse("evaluation:objective-scores", args=[scored.pk])).content.decode()
    start = html.index('id="computed-scores"')
    wrapper = html[html.rindex("<div", 0, start):start]
    assert 'class="table-wrap"' in wrapper and 'tabindex="0"' in wrapper and 'role="region"' in wrapper and "aria-label=" in wrapper
