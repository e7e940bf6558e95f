"""An organizer previews any job as a worker sees it (issue 23): every task type through its own
template and page context, marked "Preview", and nothing is stored — no claim, no assignment, no
response — whether the page is read, its answers checked live, or submitted."""
import json

import pytest
from django.urls import reverse

from annotation import task_types
from annotation.models import Item, Response, ResponseTransition, Slot, Worker
from annotation.services.jobs import create_job
from annotation.services.payload_jobs import create_payload_job
from annotation.services.voting import enable_voting
from tests.factories import good_answers, make_corpus, make_live_job

from .task_types.contract import contract_for, contract_params

pytestmark = pytest.mark.django_db


def _job_of(kind, make_annotator):
    """A draft of the type's job as its own contract test makes it (`task_types/test_<key>.py`)."""
    contract = contract_for(kind.key)
    if isinstance(kind, task_types.FromPayloads):
        return create_payload_job(name=f"{kind.key} job", task_type=kind.key, payloads=[contract.payload] * 2)
    if isinstance(kind, task_types.FromCorpusTurns):
        return create_job(corpus=make_corpus(dialogs=2, user_turns=1), name=f"{kind.key} job", task_type=kind.key,
                          settings=contract.corpus_settings)
    return contract.make_job(make_annotator)  # a vote job's items are the responses it judges


def _state(job):
    return (
        Slot.objects.filter(job=job).exclude(state=Slot.State.OPEN).count(),
        Slot.objects.filter(job=job).count(),
        Response.objects.filter(item__job=job).count(),
        Worker.objects.count(),
        ResponseTransition.objects.count(),
    )


@pytest.mark.parametrize("key", contract_params())
def test_every_task_type_is_previewed_with_its_own_page_and_nothing_is_stored(client, organizer, make_annotator, key):
    kind = task_types.get(key)
    job = _job_of(kind, make_annotator)
    before = _state(job)
    client.force_login(organizer)

    page = client.get(reverse("organizer:job-preview", kwargs={"pk": job.pk}))

    assert page.status_code == 200
    assert kind.template in [t.name for t in page.templates]  # the type's own template
    body = page.content.decode()
    assert 'id="preview-banner"' in body and "<strong>Preview</strong>" in body
    assert f'action="/organize/jobs/{job.pk}/preview/?item=' in body and 'id="skip-button"' not in body
    item = Item.objects.filter(job=job).order_by("position").first()
    # the page context of the type is what a worker gets (e.g. the pair's order, a chat's goal)
    for name in kind.page_context(item, Slot(item=item, job=job, index=0, position=item.position), job.settings):
        assert name in page.context
    check = client.post(
        reverse("organizer:job-preview-check", kwargs={"pk": job.pk, "position": item.position}),
        json.dumps({"answers": {}}), content_type="application/json",
    )
    assert check.status_code == 200 and "problems" in check.json()
    submitted = client.post(reverse("organizer:job-preview", kwargs={"pk": job.pk}) + f"?item={item.position}", {})
    assert submitted.status_code in (200, 400)
    assert _state(job) == before


def test_a_good_answer_in_a_preview_passes_its_checks_and_is_not_saved(client, organizer):
    job = create_job(corpus=make_corpus(dialogs=2, user_turns=1), name="rewrites")  # a draft: previewed before launch
    item = Item.objects.filter(job=job).order_by("position").last()
    client.force_login(organizer)
    url = reverse("organizer:job-preview", kwargs={"pk": job.pk}) + f"?item={item.position}"

    bad = client.post(url, {"paraphrase": item.payload["utterance"]})
    good = client.post(url, good_answers(item))

    assert bad.status_code == 400 and 'id="problem-summary"' in bad.content.decode()
    assert good.status_code == 200 and "These answers pass every check" in good.content.decode()
    assert not Response.objects.exists() and not Slot.objects.filter(job=job).exclude(state="open").exists()
    assert 'rel="prev"' in good.content.decode()  # item 2 of 2 links back to item 1


def test_only_organizers_preview_and_a_job_without_items_says_so(client, organizer, make_annotator):
    job = make_live_job(make_corpus(dialogs=1, user_turns=1), name="rewrites")
    user, _worker = make_annotator("ann")
    client.force_login(user)
    assert client.get(reverse("organizer:job-preview", kwargs={"pk": job.pk})).status_code == 403
    client.force_login(organizer)
    vote_job = enable_voting(job)  # no responses yet, so no items
    page = client.get(reverse("organizer:job-preview", kwargs={"pk": vote_job.pk}), follow=True)
    assert "no items to preview yet" in page.content.decode()


def test_a_chat_is_previewed_without_reaching_any_system(client, organizer):
    from .task_types.test_chat import CHAT

    job = create_payload_job(name="chats", task_type="chat", payloads=[CHAT])
    item = Item.objects.get(job=job)
    client.force_login(organizer)
    page = client.get(reverse("organizer:job-preview", kwargs={"pk": job.pk})).content.decode()
    url = reverse("organizer:job-preview-chat", kwargs={"pk": job.pk, "position": item.position})
    assert f'data-chat-url="{url}"' in page  # not the relay of a work token

    said = client.post(url, json.dumps({"action": "say", "text": "A chinese place, please."}), content_type="application/json")
    bad = client.post(url, "{not json", content_type="application/json")

    assert said.status_code == 200 and said.json()["turns"][0] == {"role": "user", "text": "A chinese place, please."}
    assert "Nothing is sent to it" in said.json()["turns"][1]["text"]
    assert bad.status_code == 400 and "Send a JSON object" in bad.json()["error"]
    assert not Response.objects.exists() and not Slot.objects.filter(job=job).exclude(state="open").exists()
