"""One request per annotation cycle (issue 26, item 1): the work page's script posts the answers with
`X-Quorum-Cycle: page` and is answered with the next item's page itself, its URL in
`X-Quorum-Location`, instead of a redirect and a second request. What the HTML flow gave stays: a
reload or the back button never stores a second response, the URL names the item, and a form post
without the script still gets Post/Redirect/Get.
"""
import re

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Response, Slot
from annotation.work_tokens import read_token
from tests.factories import good_answers, make_corpus, make_live_job

pytestmark = pytest.mark.django_db

CYCLE = {"HTTP_X_QUORUM_CYCLE": "page", "HTTP_ACCEPT": "text/html"}


def _slot(url) -> Slot:
    return Slot.objects.select_related("item").get(pk=read_token(re.search(r"/work/([^/]+)/", url).group(1))[0])


def _text(html: str) -> str:
    """The page's text as a reader sees it (tags out, spaces collapsed)."""
    return " ".join(re.sub(r"<[^>]+>", " ", html).split()).replace(" .", ".")


def _form_action(html: str) -> str:
    return re.search(r'<form method="post" action="([^"]+)" id="work-form"', html).group(1)


@pytest.fixture
def annotating(make_annotator):
    job = make_live_job(make_corpus(dialogs=2, user_turns=2))  # four items
    user, worker = make_annotator("anna")
    client = Client()
    client.force_login(user)
    claimed = client.post(reverse("job-next", args=[job.pk]))
    return client, claimed["Location"], worker


def test_the_submit_answers_with_the_next_items_page_and_names_its_url(annotating):
    client, url, worker = annotating
    first = _slot(url)

    page = client.post(url, good_answers(first.item), **CYCLE)

    assert page.status_code == 200
    location = page["X-Quorum-Location"]
    following = _slot(location)
    assert following.pk != first.pk and following.worker_id == worker.pk and following.state == Slot.State.CLAIMED
    html = page.content.decode()
    assert _form_action(html) == location.split("?")[0]  # the page shown is the item the URL names
    assert " ".join(following.item.payload["utterance"].split()[-5:]) in _text(html)
    assert "Saved. Here is your next item." in html
    assert "Item 2 of 4" in html
    stored = Response.objects.get(slot=first)
    assert stored.answers["paraphrase"] == good_answers(first.item)["paraphrase"]


def test_a_reload_shows_the_named_item_and_stores_nothing_more(annotating):
    client, url, _worker = annotating
    page = client.post(url, good_answers(_slot(url).item), **CYCLE)
    location = page["X-Quorum-Location"]

    reloaded = client.get(location)  # the address bar holds the next item's URL: a reload is a GET of it

    assert reloaded.status_code == 200
    assert _form_action(reloaded.content.decode()) == location.split("?")[0]
    assert Response.objects.count() == 1
    assert Slot.objects.filter(state=Slot.State.CLAIMED).count() == 1  # no second claim either


def test_sending_the_same_submission_again_keeps_the_first(annotating):
    client, url, _worker = annotating
    answers = good_answers(_slot(url).item)
    client.post(url, answers, **CYCLE)

    again = client.post(url, {**answers, "paraphrase": answers["paraphrase"] + " Twice."}, **CYCLE)

    assert again.status_code == 200
    assert "already saved" in again.content.decode()
    assert "X-Quorum-Location" not in again
    assert Response.objects.count() == 1
    assert "Twice" not in Response.objects.get().answers["paraphrase"]


def test_going_back_to_the_saved_item_stores_nothing(annotating):
    client, url, _worker = annotating
    client.post(url, good_answers(_slot(url).item), **CYCLE)

    back = client.get(url)

    assert back.status_code == 200
    assert "You have already answered this item" in back.content.decode()
    assert Response.objects.count() == 1
    assert Slot.objects.filter(state=Slot.State.CLAIMED).count() == 1


def test_a_refused_submission_is_the_same_page_with_its_problems_and_saves_nothing(annotating):
    client, url, _worker = annotating

    refused = client.post(url, {"paraphrase": "", "typos": "", "verbose": "", "simplified": ""}, **CYCLE)

    assert refused.status_code == 400
    assert "X-Quorum-Location" not in refused
    assert _form_action(refused.content.decode()) == url.split("?")[0]
    assert "Not saved" in refused.content.decode()
    assert Response.objects.count() == 0


def test_without_the_script_the_form_post_is_redirected(annotating):
    client, url, _worker = annotating

    posted = client.post(url, good_answers(_slot(url).item))

    assert posted.status_code == 302
    assert "X-Quorum-Location" not in posted
    assert _slot(posted["Location"]).state == Slot.State.CLAIMED


def test_after_the_last_item_the_cycle_leads_to_the_done_page(annotating):
    client, url, _worker = annotating
    for _ in range(4):
        answered = client.post(url, good_answers(_slot(url).item), **CYCLE)
        url = answered.get("X-Quorum-Location") or answered["X-Quorum-Go-To"]

    assert answered.status_code == 204  # saved; the script sends the browser to the done page
    assert "/done/" in url
    assert "Nothing left for you" in client.get(url).content.decode()
    assert Response.objects.count() == 4


def test_a_provider_that_sends_its_workers_on_gets_them_sent_by_the_script(annotating):
    """A crowd provider's completion URL is on another site: a fetch could not follow a redirect
    there, so the cycle answers 204 with the URL for the script to go to, and the response is saved."""
    from annotation import extensions

    client, url, worker = annotating
    completion = "https://app.prolific.example/submissions/complete?cc=QUORUM"
    with extensions.submit_redirects.override(worker.provider, lambda slot, response: completion):
        answered = client.post(url, good_answers(_slot(url).item), **CYCLE)

    assert answered.status_code == 204
    assert answered["X-Quorum-Go-To"] == completion
    assert "X-Quorum-Location" not in answered
    assert Response.objects.get(slot=_slot(url)).worker_id == worker.pk
    assert not Slot.objects.filter(state=Slot.State.CLAIMED).exists()  # no next item was claimed for them
