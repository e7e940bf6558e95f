"""Unseen entities (RADDLE): a rewrite job's user turns get new slot values from an entity list before
rewriting; the list is checked, the replacements are reproducible and consistent in a dialog, the
worker must keep the NEW values, and the test sets carry them with the mapping in the manifest."""
import json
from io import StringIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from annotation import task_types
from annotation.models import Corpus, Dialog, Job, Turn
from annotation.services.claims import claim_next_slot, submit_response
from annotation.services.exports import export_job
from annotation.services.jobs import JobError, create_job, launch_job
from annotation.text.entities import EntityListError, read_csv, substitute
from annotation.work_tokens import make_token

KIND = task_types.get("rewrite")
CSV = "slot,value\narea,north\narea,east\npricerange,expensive\n"
ENTITIES = read_csv(CSV, "entities.csv")


def test_the_entity_list_is_read_and_checked_by_line():
    assert ENTITIES == [{"slot": "area", "value": "north"}, {"slot": "area", "value": "east"}, {"slot": "pricerange", "value": "expensive"}]

    def error(text):
        with pytest.raises(EntityListError) as caught:
            read_csv(text, "e.csv")
        return str(caught.value)

    assert error("name,value\narea,north\n") == 'e.csv line 1: the header must be "slot,value"'
    assert error("slot,value\narea,north\narea,\n") == 'e.csv line 3: the value of slot "area" is empty'
    assert error("slot,value\n,north\n") == "e.csv line 2: the slot is empty"
    assert error("slot,value\narea,north,south\n") == "e.csv line 2: expected 2 cells (slot, value), found 3"
    assert error("slot,value\n") == "e.csv: no entities under the header"
    assert read_csv('Slot, Value\n"food","Thai, spicy"\n\n', "e.csv") == [{"slot": "food", "value": "Thai, spicy"}]


def test_values_are_replaced_where_they_stand_in_one_pass():
    text, values, changes = substitute(
        "A cheap place for 4 people, not 14, in the centre.",
        [{"slot": "price", "value": "cheap"}, {"slot": "people", "value": "4"}, {"slot": "area", "value": "centre"}],
        {("price", "cheap"): "expensive", ("people", "4"): "centre", ("area", "centre"): "north"},
    )
    # "4" is not replaced inside "14", and the new "centre" for 4 is not replaced again by north.
    assert text == "A expensive place for centre people, not 14, in the north."
    assert values == [{"slot": "price", "value": "expensive"}, {"slot": "people", "value": "centre"}, {"slot": "area", "value": "north"}]
    assert changes[0] == {"slot": "price", "old": "cheap", "new": "expensive"}


def test_two_slots_with_the_same_value_get_one_new_text_everywhere():
    slot_values = [{"slot": "hotel-area", "value": "centre"}, {"slot": "restaurant-area", "value": "centre"}]
    text, values, changes = substitute("Both in the centre.", slot_values, {("hotel-area", "centre"): "north", ("restaurant-area", "centre"): "east"})
    new = {v["value"] for v in values}
    assert len(new) == 1 and text == f"Both in the {new.pop()}." and {c["new"] for c in changes} == {values[0]["value"]}


def _corpus(name="restaurants"):
    corpus = Corpus.objects.create(name=name, source_format="jsonl")
    for d in range(6):
        dialog = Dialog.objects.create(corpus=corpus, external_id=f"d{d}", position=d)
        Turn.objects.create(dialog=dialog, index=0, speaker="user", text="A cheap place in the centre please.",
                            slot_values=[{"slot": "pricerange", "value": "cheap"}, {"slot": "area", "value": "centre"}])
        Turn.objects.create(dialog=dialog, index=1, speaker="system", text="Lotus is cheap.")
        Turn.objects.create(dialog=dialog, index=2, speaker="user", text="Is it in the centre?", slot_values=[{"slot": "area", "value": "centre"}])
    return corpus


def _job(corpus, seed=0, name="unseen"):
    return create_job(corpus=corpus, name=name, settings={"entities": ENTITIES, "entity_seed": seed})


def _payloads(job):
    return [item.payload for item in job.items.order_by("position")]


@pytest.mark.django_db
def test_replacements_are_reproducible_by_seed_and_consistent_in_a_dialog():
    corpus = _corpus()
    first, again, other = _payloads(_job(corpus)), _payloads(_job(corpus, name="again")), _payloads(_job(corpus, seed=5, name="other"))
    assert first == again and first != other
    # The same corpus file imported again (other rows): the same list and seed give the same values.
    assert _payloads(_job(_corpus(name="restaurants again"), name="reimported")) == first
    for opening, follow_up in zip(first[::2], first[1::2], strict=False):  # the two user turns of a dialog
        assert opening["source_utterance"] == "A cheap place in the centre please."
        new_area = opening["slot_values"][1]
        assert new_area in ("north", "east") and opening["slot_values"][0] == "expensive"
        assert opening["utterance"] == f"A expensive place in the {new_area} please."
        assert follow_up["utterance"] == f"Is it in the {new_area}?"  # the same value the same way
        assert follow_up["entities"] == [{"slot": "area", "old": "centre", "new": new_area}]
        assert opening["dialog_entities"] == follow_up["dialog_entities"]
    assert {p["slot_values"][-1] for p in first} == {"north", "east"}  # both values drawn somewhere


@pytest.mark.django_db
def test_an_entity_list_naming_a_slot_no_turn_has_is_refused_and_writes_nothing():
    with pytest.raises(JobError) as caught:
        create_job(corpus=_corpus(), name="bad", settings={"entities": [{"slot": "food", "value": "Thai"}]})
    assert caught.value.errors == {"entities": "the entity list names slot(s) food that no selected user turn has (slots there: area, pricerange)"}
    assert not Job.objects.exists()


@pytest.mark.django_db
def test_the_worker_sees_the_new_values_and_must_keep_them(make_annotator):
    user, worker = make_annotator("rae")
    job = launch_job(_job(_corpus()))
    slot = claim_next_slot(job=job, worker=worker)
    payload = slot.item.payload
    client = Client()
    client.force_login(user)
    url = reverse("work", args=[make_token(slot)])
    html = client.get(url).content.decode()
    new_area = payload["slot_values"][1]
    assert f'<mark class="slot">expensive</mark> place in the <mark class="slot">{new_area}</mark>' in html
    assert 'id="entity-mapping"' in html and '<del lang="en">centre</del>' in html
    old_values = {"paraphrase": "I would like a cheap place in the centre.", "typos": "A cheap plase in the centre please.",
                  "verbose": "Hello, I would really like to find a cheap place in the centre please.", "simplified": "cheap centre"}
    refused = client.post(url, old_values)
    assert refused.status_code == 400 and f"keep the slot value &quot;{new_area}&quot; exactly" in refused.content.decode()
    new_values = {k: v.replace("cheap", "expensive").replace("centre", new_area) for k, v in old_values.items()}
    assert client.post(url, new_values).status_code == 302


@pytest.mark.django_db
def test_the_test_sets_keep_the_new_values_and_the_manifest_the_mapping(make_annotator, tmp_path):
    job = launch_job(_job(_corpus()))
    worker = make_annotator("w")[1]
    slot = claim_next_slot(job=job, worker=worker)  # one rewritten turn; the others keep their new text
    new = slot.item.payload
    submit_response(slot_id=slot.pk, worker=worker, answers={
        "paraphrase": f"I'd like an expensive place in the {new['slot_values'][1]}.",
        "typos": new["utterance"].replace("place", "plase"),
        "verbose": "Hello there, " + new["utterance"], "simplified": f"expensive {new['slot_values'][1]}",
    })
    export_job(job, tmp_path / "out")
    dialogs = [json.loads(line) for line in (tmp_path / "out" / "paraphrase" / "dialogs.jsonl").read_text().splitlines()]
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    payloads = _payloads(job)
    for dialog, entry, (_opening, follow_up) in zip(dialogs, manifest["dialogs"], zip(payloads[::2], payloads[1::2], strict=False), strict=False):
        user_turns = [t for t in dialog["turns"] if t["speaker"] == "user"]
        assert user_turns[1]["text"] == follow_up["utterance"]  # no rewrite: the new values, verbatim
        assert [sv["value"] for sv in user_turns[1]["slot_values"]] == follow_up["slot_values"]
        assert entry["items"]["2"] == {"entities": follow_up["entities"]}
        assert "centre" not in user_turns[0]["text"] and "cheap" not in user_turns[0]["text"]
    assert dialogs[0]["turns"][0]["text"].startswith("I'd like an expensive place")


@pytest.mark.django_db
def test_the_command_and_the_page_take_an_entity_csv(tmp_path, organizer):
    corpus = _corpus()
    path = tmp_path / "entities.csv"
    path.write_text(CSV, encoding="utf-8")
    call_command("create_job", "restaurants", "--name", "cmd", "--entities", str(path), stdout=StringIO())
    assert Job.objects.get(name="cmd").settings["entities"] == ENTITIES
    path.write_text("slot,value\narea,\n", encoding="utf-8")
    with pytest.raises(CommandError, match='--entities: entities.csv line 2: the value of slot "area" is empty'):
        call_command("create_job", "restaurants", "--name", "cmd 2", "--entities", str(path))

    client = Client()
    client.force_login(organizer)
    form = {"corpus": corpus.pk, "name": "page", "task_type": "rewrite", "selection_mode": "all", "redundancy": 1,
            "reward": "0.50", "claim_timeout_minutes": 30, "setting__rewrite__variants": "paraphrase"}
    page = client.post(reverse("organizer:job-new"), {**form, "setting__rewrite__entities": SimpleUploadedFile("e.csv", b"slot,value\nfood,Thai\n")})
    assert page.status_code == 200 and "the entity list names slot(s) food" in page.content.decode()
    assert client.post(reverse("organizer:job-new"), {**form, "setting__rewrite__entities": SimpleUploadedFile("e.csv", CSV.encode())}).status_code == 302
    assert Job.objects.get(name="page").settings["entities"] == ENTITIES


@pytest.mark.django_db
def test_the_api_takes_the_entity_list_as_a_setting(organizer_api):
    corpus = _corpus()
    made = organizer_api.post("/api/jobs/", {"corpus": corpus.pk, "name": "api", "settings": {"entities": ENTITIES}}, format="json")
    assert made.status_code == 202 and made.data["status"] == "succeeded"
    assert Job.objects.get(name="api").items.first().payload["slot_values"][0] == "expensive"
    bad = organizer_api.post("/api/jobs/", {"corpus": corpus.pk, "name": "api 2", "settings": {"entities": [{"slot": "area"}]}}, format="json")
    assert bad.status_code == 400 and "entities" in json.dumps(bad.json())
