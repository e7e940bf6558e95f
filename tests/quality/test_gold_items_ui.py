"""Gold items from the organizer's side (issue 5): add one on the job page or by the API by picking an
item of the job and giving the known answer; the job page and the API list gold items with their
pass rates. Organizers only; a refused request is a 400 that names the field and adds nothing."""
import pytest
from django.urls import reverse

from annotation.models import Item, Response
from annotation.services.claims import claim_next_slot, submit_response
from annotation.services.jobs import launch_job
from annotation.services.payload_jobs import create_payload_job
from annotation.services.quality import set_quality
from tests.annotation.test_api import client_for
from tests.factories import make_corpus, make_live_job

pytestmark = pytest.mark.django_db


def likert_job(items=3):
    payloads = [
        {
            "context": [{"speaker": "user", "text": f"Is there parking at hotel {i}?"}],
            "response": f"Yes, hotel {i} has free parking.",
            "knowledge": [{"entity": f"Hotel {i}", "title": "Parking", "body": "Free parking on site."}],
        }
        for i in range(items)
    ]
    job = create_payload_job(name="ratings", task_type="likert", payloads=payloads)
    return launch_job(job)


def first_item(job):
    return job.items.filter(gold__isnull=True).order_by("position").first()


def gold_count(job):
    return Item.objects.filter(job=job, gold__isnull=False).count()


def answer_gold(job, worker, answers):
    """The worker's first claim is the gold item (one onboarding item); they answer it."""
    slot = claim_next_slot(job=job, worker=worker)
    assert slot.item.gold is not None
    return submit_response(slot_id=slot.pk, worker=worker, answers=answers)


# --- the job page ---------------------------------------------------------------------------------------


def test_organizer_adds_a_gold_item_on_the_job_page_and_sees_its_pass_rate(organizer, client, make_annotator):
    job = likert_job()
    source = first_item(job)
    client.force_login(organizer)
    page = client.get(reverse("organizer:job", kwargs={"pk": job.pk})).content.decode()
    assert 'id="gold-form"' in page and 'name="gold__accuracy"' in page and 'name="gold__appropriateness"' in page
    assert 'id="no-gold"' in page

    # The page names items by their number (position + 1), as the review queue and the preview do.
    response = client.post(reverse("organizer:job-gold", kwargs={"pk": job.pk}), {"item": source.position + 1, "gold__accuracy": "4"})
    assert response.status_code == 302 and response["Location"].endswith("#gold")
    gold = Item.objects.get(job=job, gold__isnull=False)
    assert gold.payload == source.payload and gold.gold == {"accuracy": 4}  # blank appropriateness is not graded

    set_quality(job, onboarding_items=1, onboarding_pass_rate=1.0)
    answer_gold(job, make_annotator("careful")[1], {"appropriateness": 2, "accuracy": 5})  # within one point
    answer_gold(job, make_annotator("careless")[1], {"appropriateness": 5, "accuracy": 1})
    page = client.get(reverse("organizer:job", kwargs={"pk": job.pk})).content.decode()
    row = page[page.index(f'id="gold-{gold.pk}"'):]
    row = row[: row.index("</tr>")]
    assert "Yes, hotel 0 has free parking." in row and "accuracy: 4" in row
    assert '<td class="answered">2</td>' in row and '<td class="correct">1</td>' in row
    assert '<td class="pass-rate">50%</td>' in row
    assert "This job has 1 gold item." in page
    assert f"<td>item {gold.position + 1}</td>" in row  # the gold item by its number too


@pytest.mark.parametrize(
    "body,field,message",
    [
        ({"item": 999999, "gold__accuracy": "4"}, "item", "This job has no item 999999: its items are numbered 1 to 4."),
        ({"item": "", "gold__accuracy": "4"}, "item", "This field is required"),
        ({"item": "SOURCE"}, None, "Give the known answer to at least one field"),
        ({"item": "GOLD", "gold__accuracy": "4"}, "item", "is a gold item already"),
        ({"item": "SOURCE", "gold__accuracy": "9"}, "gold__accuracy", "Select a valid choice"),
    ],
)
def test_a_refused_gold_item_says_what_to_fix_and_adds_nothing(body, field, message, organizer, client):
    job = likert_job()
    client.force_login(organizer)
    source = first_item(job)
    client.post(reverse("organizer:job-gold", kwargs={"pk": job.pk}), {"item": source.position + 1, "gold__accuracy": "3"})
    existing_gold = Item.objects.get(job=job, gold__isnull=False)
    body = {k: {"SOURCE": source.position + 1, "GOLD": existing_gold.position + 1}.get(v, v) for k, v in body.items()}

    response = client.post(reverse("organizer:job-gold", kwargs={"pk": job.pk}), body)
    assert response.status_code == 400
    assert gold_count(job) == 1
    form = response.context["gold_form"]
    errors = form.errors.get(field or "__all__", [])
    assert any(message in e for e in errors), form.errors
    assert message in response.content.decode()


def test_a_known_answer_that_fails_the_task_types_checks_is_refused_under_its_field(organizer, client):
    job = make_live_job(make_corpus(dialogs=1, user_turns=1), name="rewrites")
    source = first_item(job)
    client.force_login(organizer)
    response = client.post(
        reverse("organizer:job-gold", kwargs={"pk": job.pk}),
        {"item": source.position + 1, "gold__paraphrase": "I need a table."},  # drops the slot values the rewrite must keep
    )
    assert response.status_code == 400 and gold_count(job) == 0
    assert response.context["gold_form"].errors.get("gold__paraphrase")


@pytest.mark.parametrize("role,expected", [("anonymous", 302), ("annotator", 403)])
def test_only_organizers_add_gold_items_or_recompute_flags_on_the_page(role, expected, client, make_annotator):
    job = likert_job()
    if role == "annotator":
        client.force_login(make_annotator("ann")[0])
    response = client.post(reverse("organizer:job-gold", kwargs={"pk": job.pk}), {"item": first_item(job).position + 1, "gold__accuracy": "4"})
    assert response.status_code == expected and gold_count(job) == 0
    assert client.post(reverse("organizer:job-flags", kwargs={"pk": job.pk})).status_code == expected


def test_page_writes_refuse_get_and_missing_jobs_are_404(organizer, client):
    job = likert_job()
    client.force_login(organizer)
    for name in ("organizer:job-gold", "organizer:job-flags"):
        assert client.get(reverse(name, kwargs={"pk": job.pk})).status_code == 405
        assert client.post(reverse(name, kwargs={"pk": 999999})).status_code == 404


# --- the API --------------------------------------------------------------------------------------------


def test_api_adds_and_lists_gold_items_with_pass_rates(organizer, make_annotator):
    job = likert_job()
    source = first_item(job)
    api = client_for(organizer)
    assert api.get(f"/api/jobs/{job.pk}/gold/").data == []

    created = api.post(f"/api/jobs/{job.pk}/gold/", {"item": source.pk, "gold": {"appropriateness": 5, "accuracy": "2"}}, format="json")
    assert created.status_code == 201, created.data
    assert created.data["expected"] == {"appropriateness": 5, "accuracy": 2}
    assert created.data["answered"] == 0 and created.data["pass_rate"] is None
    gold = Item.objects.get(pk=created.data["item_id"])
    assert gold.job == job and gold.payload == source.payload

    set_quality(job, onboarding_items=1, onboarding_pass_rate=1.0)
    for name, answers in [("a", {"appropriateness": 4, "accuracy": 2}), ("b", {"appropriateness": 5, "accuracy": 3}),
                          ("c", {"appropriateness": 1, "accuracy": 2})]:
        answer_gold(job, make_annotator(name)[1], answers)
    [row] = api.get(f"/api/jobs/{job.pk}/gold/").data
    assert row["item_id"] == gold.pk and row["answered"] == 3 and row["correct"] == 2
    assert row["pass_rate"] == pytest.approx(2 / 3)
    assert Response.objects.filter(item=gold).count() == 3


@pytest.mark.parametrize(
    "body,expected",
    [
        ({"item": 999999, "gold": {"accuracy": 4}}, {"item"}),
        ({"gold": {"accuracy": 4}}, {"item"}),
        ({"item": "SOURCE", "gold": {"fluency": 4}}, {"gold"}),
        ({"item": "SOURCE", "gold": {}}, {"gold"}),
        ({"item": "SOURCE", "gold": "4"}, {"gold"}),
        ({"item": "SOURCE", "gold": {"accuracy": 7}}, {"gold"}),
        ({"item": 999999, "gold": {"fluency": 4}}, {"item", "gold"}),
    ],
)
def test_api_refusals_are_400s_that_name_the_field(body, expected, organizer):
    job = likert_job()
    source = first_item(job)
    body = {k: source.pk if v == "SOURCE" else v for k, v in body.items()}
    response = client_for(organizer).post(f"/api/jobs/{job.pk}/gold/", body, format="json")
    assert response.status_code == 400
    assert set(response.data) == expected, response.data
    assert gold_count(job) == 0


def test_api_names_the_answer_field_whose_known_value_is_invalid(organizer):
    job = likert_job()
    response = client_for(organizer).post(
        f"/api/jobs/{job.pk}/gold/", {"item": first_item(job).pk, "gold": {"accuracy": 7, "appropriateness": 3}}, format="json"
    )
    assert response.status_code == 400
    assert list(response.data["gold"]) == ["accuracy"]
    assert "from 1 to 5" in response.data["gold"]["accuracy"][0]


def test_api_refuses_an_item_of_another_job(organizer):
    job, other = likert_job(), make_live_job(make_corpus(name="other", dialogs=1, user_turns=1), name="other")
    response = client_for(organizer).post(
        f"/api/jobs/{job.pk}/gold/", {"item": first_item(other).pk, "gold": {"accuracy": 4}}, format="json"
    )
    assert response.status_code == 400 and "no item" in response.data["item"][0]
    assert gold_count(job) == gold_count(other) == 0


@pytest.mark.parametrize("method", ["get", "post"])
@pytest.mark.parametrize("role,expected", [("anonymous", 401), ("annotator", 403)])
def test_api_gold_is_for_organizers_only(method, role, expected, make_annotator):
    job = likert_job()
    user = make_annotator("ann")[0] if role == "annotator" else None
    api = client_for(user)
    path = f"/api/jobs/{job.pk}/gold/"
    response = api.get(path) if method == "get" else api.post(path, {"item": first_item(job).pk, "gold": {"accuracy": 4}}, format="json")
    assert response.status_code == expected and "detail" in response.data
    assert gold_count(job) == 0


def test_api_gold_of_a_missing_job_is_404(organizer):
    api = client_for(organizer)
    assert api.get("/api/jobs/999999/gold/").status_code == 404
    assert api.post("/api/jobs/999999/gold/", {"item": 1, "gold": {"accuracy": 4}}, format="json").status_code == 404
