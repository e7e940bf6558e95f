"""Small things a first-time user meets: uploads are files in the API schema (the docs page offers a
file picker), the favicon exists, annotators get the friendly "Organizers only" page on evaluation,
chat goals read as sentences, and "Item N of M" never counts past the job's items."""
import pytest
from django.core.cache import cache

from evaluation.interactive.goals import goal_text


@pytest.mark.django_db
def test_every_multipart_file_field_is_declared_binary(organizer, client):
    client.force_login(organizer)
    schema = client.get("/api/schema/?format=json").json()
    components = schema["components"]["schemas"]
    files = 0
    for operations in schema["paths"].values():
        for operation in operations.values():
            body = (operation.get("requestBody") or {}).get("content", {}).get("multipart/form-data")
            if not body:
                continue
            props = body["schema"].get("properties") or components[body["schema"]["$ref"].rsplit("/", 1)[-1]]["properties"]
            for name, prop in props.items():
                target = prop.get("items", prop)
                assert target.get("format") != "uri", f"{name} of a multipart body is declared a URI, not a file"
                files += target.get("format") == "binary"
    assert files >= 10


@pytest.mark.django_db
def test_the_favicon_is_there_and_annotators_get_a_friendly_page_on_evaluation(client, make_annotator):
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"].endswith("favicon.svg")
    user, _worker = make_annotator("ann")
    client.force_login(user)
    page = client.get("/evaluation/")
    assert page.status_code == 403 and "Organizers only" in page.content.decode()


def test_chat_goals_read_as_sentences():
    goal = {"restaurant": {"info": {"food": "chinese", "area": "centre"}, "book": {"people": 2, "day": "monday"}}}
    assert goal_text(goal) == ["You are looking for a restaurant serving chinese food in the centre.", "Book it for 2 people on monday."]
    assert goal_text({"hotel": {"info": {"parking": "yes"}, "book": {"people": "1", "stay": 1}}})[1] == "Book it for 1 person for 1 night."


@pytest.mark.django_db
def test_item_count_follows_a_new_round(django_capture_on_commit_callbacks):
    from annotation.selectors.work import item_count
    from annotation.services.payload_jobs import add_payload_items, create_payload_job

    pair = {"context": [{"speaker": "user", "text": "Hi"}], "a": {"system": "A", "text": "x"}, "b": {"system": "B", "text": "y"}}
    cache.clear()
    job = create_payload_job(name="pairs", task_type="pairwise", payloads=[pair])
    assert item_count(job) == 1
    with django_capture_on_commit_callbacks(execute=True):
        add_payload_items(job, [pair, pair])
    assert item_count(job) == 3  # not "Item 2 of 1" for the new round
