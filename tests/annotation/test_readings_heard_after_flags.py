"""A reading transcribed after the job's last flag run (the recogniser runs in the background) is
not judged "worth a listen" yet: the job page says so beside the flags, and the beat's flag sweep
runs the job again even once it is no longer live, so a finished job's last readings are judged too."""
import re

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Job, SpokenReading
from annotation.services import flag_runs
from annotation.services.jobs import finish_job

from .spoken_audio import speech
from .test_spoken_evidence import _job, _submit, _transcribe_all

pytestmark = [pytest.mark.django_db, pytest.mark.speech]

OTHER_SENTENCE = "The weather is lovely today and I will walk the dog in the park."


def _stale_notice(organizer, job) -> str | None:
    client = Client()
    client.force_login(organizer)
    body = client.get(reverse("organizer:job", args=[job.pk])).content.decode()
    found = re.search(r'id="readings-stale">(.*?)</p>', body, re.S)
    return " ".join(re.sub(r"<[^>]+>", "", found.group(1)).split()) if found else None


def test_a_finished_jobs_reading_heard_after_its_flags_is_said_and_swept(make_annotator, organizer):
    job = _job(dialogs=2)
    _submit(job, *make_annotator("honest"), lambda turn: speech(turn))
    _submit(job, *make_annotator("other-sentence"), speech(OTHER_SENTENCE))
    flag_runs.run_flags(job.pk)  # before the recogniser: nothing heard yet, nothing judged
    job = finish_job(Job.objects.get(pk=job.pk))
    assert flag_runs.jobs_to_sweep() == [] and _stale_notice(organizer, job) is None

    _transcribe_all()
    assert SpokenReading.objects.filter(job=job, transcribed_at__isnull=False).count() == 2
    assert _stale_notice(organizer, job) == (
        "Out of date: 2 readings transcribed since then have not been judged for “worth a listen”. "
        "Recompute flags now to judge them (the scheduled run does within minutes)."
    )
    assert flag_runs.jobs_to_sweep() == [job.pk]  # finished, yet swept for its readings

    flag_runs.run_flags(job.pk)  # what the sweep queues
    assert flag_runs.jobs_to_sweep() == [] and _stale_notice(organizer, job) is None
    flagged = Job.objects.get(pk=job.pk).flag_report.response_flags
    assert sum("worth_a_listen" in codes for codes in flagged.values()) == 1  # the other sentence, judged now
