"""The pairwise work page's key line read "3 about as good (when offered)" on every job: a worker
of a job that offers no tie was told of a key that does nothing, and one whose job offers it was
left to guess whether it was. It now names key 3 only where the tie is offered."""
import pytest
from django.test import Client
from django.urls import reverse

from annotation.services.claims import claim_next_slot
from annotation.services.jobs import launch_job
from annotation.services.payload_jobs import create_payload_job
from annotation.work_tokens import make_token

pytestmark = pytest.mark.django_db

PAIR = {"context": [{"speaker": "user", "text": "Any parking?"}], "a": {"system": "s1", "text": "Yes, free."}, "b": {"system": "s2", "text": "No idea."}}


def _key_line(make_annotator, name, allow_tie):
    job = launch_job(create_payload_job(name=name, task_type="pairwise", payloads=[PAIR], settings={"allow_tie": allow_tie}))
    user, worker = make_annotator(f"w-{name}")
    client = Client()
    client.force_login(user)
    page = client.get(reverse("work", args=[make_token(claim_next_slot(job=job, worker=worker))])).content.decode()
    return page.split('id="key-hint">')[1].split("</p>")[0], page


@pytest.mark.parametrize("allow_tie", [True, False])
def test_the_key_line_names_key_3_only_where_a_tie_is_offered(make_annotator, allow_tie):
    line, page = _key_line(make_annotator, f"tie-{allow_tie}", allow_tie)
    assert "<kbd>1</kbd> Response 1, <kbd>2</kbd> Response 2" in line
    assert ("<kbd>3</kbd>" in line) is allow_tie
    assert ('value="tie"' in page) is allow_tie  # the key line says what the choices are
    assert "when offered" not in line
