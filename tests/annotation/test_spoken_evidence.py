"""The evidence that a person read the turn, as a builder reads it: on the review queue beside each
reading (seconds of speech, the hypothesis against the turn, the same recording sent twice) and in
the export; an honest reader is never marked, and one recording sent for two readings is refused.

Recordings are made in the test run (espeak-ng, numpy); the default recogniser transcribes them."""
import json

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Response, SpokenReading
from annotation.services import readings as reading_service
from annotation.services.claims import claim_next_slot
from annotation.services.exports import export_job
from annotation.speech.audio import Audio, write_wav
from annotation.work_tokens import make_token
from tests.factories import make_corpus, make_live_job

from .spoken_audio import speech, upload

pytestmark = [pytest.mark.django_db, pytest.mark.speech]


def _job(dialogs=1):
    return make_live_job(make_corpus(name="spoken", dialogs=dialogs, user_turns=1), task_type="spoken_reading",
                         name="spoken job", settings={"readings": 1}, redundancy=4)


def _submit(job, user, worker, wav, readings=1):
    """`wav`: the recording's bytes, or a function of the turn the worker was given that makes them."""
    client = Client()
    client.force_login(user)
    slot = claim_next_slot(job=job, worker=worker)
    wav = wav(slot.item.payload["utterance"]) if callable(wav) else wav
    answers = {f"reading_{i + 1}": upload(f"reading_{i + 1}", wav) for i in range(readings)}
    return slot, client.post(reverse("work", args=[make_token(slot)]), answers)


def _cough() -> bytes:
    """A burst of noise in a quiet room: loud enough to pass the silence check, no words."""
    rng = np.random.default_rng(3)
    room = lambda s: rng.normal(0, 0.003, int(s * 16000))  # noqa: E731
    return write_wav(Audio.from_samples(np.concatenate([room(0.8), rng.normal(0, 0.3, 3200), room(1.0)]), 16000))


def _transcribe_all():
    for reading in SpokenReading.objects.all():
        reading_service.transcribe(reading.pk)


def _review(organizer, job) -> str:
    client = Client()
    client.force_login(organizer)
    return client.get(reverse("organizer:job-review", args=[job.pk])).content.decode()


def _card(html: str, response: Response) -> str:
    start = html.index(f'id="response-{response.pk}"')
    end = html.find('<article class="card review-row"', start + 1)
    return html[start:end if end > 0 else len(html)]


def test_the_review_queue_shows_each_reading_s_evidence_and_marks_only_the_cheats(make_annotator, organizer, tmp_path):
    job = _job(dialogs=2)
    honest_user, honest = make_annotator("honest")
    other_user, other = make_annotator("other-sentence")
    cough_user, cougher = make_annotator("cougher")
    replay_user, replayer = make_annotator("replayer")
    _submit(job, honest_user, honest, lambda turn: speech(turn.replace("I need", "I would like")))
    _submit(job, other_user, other, speech("The weather is lovely today and I will walk the dog in the park."))
    _submit(job, cough_user, cougher, _cough())
    replayed = speech("Could I get a cheap table somewhere nice?")
    _submit(job, replay_user, replayer, replayed)  # the same file for both of the job's items
    _submit(job, replay_user, replayer, replayed)
    _transcribe_all()

    html = _review(organizer, job)
    honest_card = _card(html, Response.objects.get(worker=honest))
    assert "s of it speech" in honest_card and "Against the turn:" in honest_card and "WER" in honest_card
    assert "Worth a listen" not in honest_card  # an honest reader is never marked
    assert honest_card.split("Votes and evidence")[1].count('<span class="muted">none</span>') == 1
    other_card = _card(html, Response.objects.get(worker=other))
    assert "Worth a listen: the recogniser heard" in other_card and "of the turn&#x27;s 12 words" in other_card
    cough_card = _card(html, Response.objects.get(worker=cougher))
    assert "Worth a listen: little speech: sound above the background for only" in cough_card
    evidence = cough_card.split("Votes and evidence")[1]  # the evidence column says it too, by reading
    assert "Worth a listen</strong> (the recordings)" in evidence and "<li>Reading 1: little speech" in evidence
    assert '<span class="muted">none</span>' not in evidence
    first, second = Response.objects.filter(worker=replayer).order_by("pk")
    assert f"Worth a listen: the same recording as reading 1 of response {second.pk}" in _card(html, first)
    assert f"Worth a listen: the same recording as reading 1 of response {first.pk}" in _card(html, second)

    client = Client()
    client.force_login(organizer)
    client.post(reverse("organizer:review-view"), {"view": "compact"})
    table = client.get(reverse("organizer:job-review", args=[job.pk])).content.decode()
    assert table.count('class="chip reading-doubt"') == 4  # the cougher, the other sentence, both replays; not the honest reader
    assert "worth a listen: 2" in table  # the cougher's two readings

    export_job(job, tmp_path / "out")
    rows = {(r["response_id"], r["reading"]): r for r in map(json.loads, (tmp_path / "out" / "readings.jsonl").open())}
    honest_row = rows[(Response.objects.get(worker=honest).pk, 1)]
    assert honest_row["speech_seconds"] > 1 and honest_row["turn_words_heard"] > honest_row["turn_words"] / 2
    assert honest_row["same_recording_as"] == []
    assert rows[(first.pk, 1)]["same_recording_as"] == [{"response_id": second.pk, "reading": 1}]
    assert rows[(Response.objects.get(worker=cougher).pk, 1)]["speech_seconds"] < 0.5
    header = (tmp_path / "out" / "responses.csv").read_text().splitlines()[0]
    assert "reading_1_speech_seconds" in header and "reading_1_wer_against_turn" in header


def test_one_recording_sent_for_two_readings_is_refused_naming_both(make_annotator):
    user, worker = make_annotator("copier")
    job = make_live_job(make_corpus(name="spoken", dialogs=1, user_turns=1), task_type="spoken_reading",
                        name="spoken job", settings={"readings": 2})
    wav = speech(job.items.get().payload["utterance"])
    client = Client()
    client.force_login(user)
    slot = claim_next_slot(job=job, worker=worker)
    posted = client.post(reverse("work", args=[make_token(slot)]),
                         {"reading_1": upload("r1", wav), "reading_2": upload("r2", wav)}, HTTP_ACCEPT="application/json")
    assert posted.status_code == 400
    assert posted.json()["errors"] == {
        "reading_2": ["Reading 2: this is the same recording as Reading 1. Read the turn aloud again for this reading."]
    }
    assert not Response.objects.filter(worker=worker).exists() and not SpokenReading.objects.exists()


def test_the_test_set_takes_an_honest_reading_over_an_earlier_cheat_and_a_cheat_only_where_alone(make_annotator, tmp_path):
    """Both responses count (nobody reviewed them): the earlier one reads another sentence. Before,
    spoken_1 put its hypothesis in place of the turn; now the honest reading stands in for it, and
    the cheat's is used only for a turn no other reading covers (the README says so)."""
    job = _job(dialogs=1)
    cheat_user, cheat = make_annotator("other-sentence")
    honest_user, honest = make_annotator("honest")
    _submit(job, cheat_user, cheat, speech("The weather is lovely today and I will walk the dog in the park."))
    _submit(job, honest_user, honest, lambda turn: speech(turn.replace("I need", "I would like")))
    _transcribe_all()
    assert set(Response.objects.values_list("status", flat=True)) == {Response.Status.ACCEPTED}
    honest_text = SpokenReading.objects.get(response__worker=honest).asr_text

    export_job(job, tmp_path / "out")
    (dialog,) = [json.loads(line) for line in (tmp_path / "out" / "spoken_1" / "dialogs.jsonl").open()]
    assert next(t for t in dialog["turns"] if t["speaker"] == "user")["text"] == honest_text
    assert "a reading worth a listen" in (tmp_path / "out" / "README.md").read_text()

    Response.objects.filter(worker=honest).delete()  # the cheat alone: used, and in the numbers
    export_job(job, tmp_path / "again")
    cheat_text = SpokenReading.objects.get(response__worker=cheat).asr_text
    (dialog,) = [json.loads(line) for line in (tmp_path / "again" / "spoken_1" / "dialogs.jsonl").open()]
    assert next(t for t in dialog["turns"] if t["speaker"] == "user")["text"] == cheat_text
