"""An in-house annotator whose response a reviewer rejected or excluded reads why on their home
page, in the reviewer's words and escaped, beside the status; never who decided. A decision that was
undone no longer speaks, and one recorded without a reason says so."""
import re

import pytest
from django.urls import reverse

from annotation.models import CheckOverride, Response
from annotation.services.quality import override_verdict
from annotation.services.review_undo import undo_decision
from tests.factories import make_corpus, make_live_job
from tests.quality.helpers import write

pytestmark = pytest.mark.django_db
HOSTILE = '<script>alert("x")</script>'


def status_cells(page: str) -> dict[str, str]:
    """The Status cell of each row of "Your responses", by the row's item number."""
    rows = re.findall(r"<tr><td>[^<]*</td><td>(\d+)</td><td>[^<]*</td><td>(.*?)</td></tr>", page, re.S)
    return {item: " ".join(cell.split()) for item, cell in rows}


def test_the_annotator_reads_the_reviewers_reason_where_the_status_is(make_annotator, client, organizer):
    organizer.first_name, organizer.last_name = "Olga", "Reviewer"
    organizer.save()
    job = make_live_job(make_corpus(dialogs=5, user_turns=1))
    user, worker = make_annotator("anna")
    first, second, third, fourth, fifth = (write(job, worker) for _ in range(5))

    override_verdict(first, status=Response.Status.REJECTED, reason=f"The paraphrase drops the area {HOSTILE}", check="vote", by=organizer)
    override_verdict(second, status=Response.Status.EXCLUDED, reason="Copied the source turn.", check="vote", by=organizer)
    # A decision stored without a reason (an older row, the admin): the worker is told there is none.
    override_verdict(third, status=Response.Status.REJECTED, reason="placeholder", check="vote", by=organizer)
    CheckOverride.objects.filter(response=third).update(reason="")
    # A decision taken back: the response is accepted again, and the old reason is not shown.
    undone = override_verdict(fourth, status=Response.Status.REJECTED, reason="Wrong decision, sorry.", check="vote", by=organizer)
    undo_decision(undone, reason="misclick", by=organizer)
    client.force_login(user)

    page = client.get(reverse("home")).content.decode()
    cells = status_cells(page)
    assert cells["1"] == "Rejected (not paid) <div class=\"decision-reason\"><span class=\"muted\">The reviewer's reason:</span> " \
        "“The paraphrase drops the area &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;”</div>"
    assert "Copied the source turn." in cells["2"] and cells["2"].startswith("Excluded (paid, data left out)")
    assert cells["3"].startswith("Rejected (not paid)") and "No reason was given." in cells["3"]
    assert cells["4"] == "Accepted" and cells["5"] == "Accepted"
    assert HOSTILE not in page and "Wrong decision" not in page and "misclick" not in page
    # Who decided is not the worker's to know.
    for name in ("olga", "Olga", "Reviewer"):
        assert name not in page.split('id="recent-title"', 1)[1]


def test_a_response_rejected_without_a_reviewer_names_no_reason(make_annotator, client):
    """Only a reviewer's decision carries a reason here; a provider's or the vote's is said elsewhere."""
    job = make_live_job(make_corpus(dialogs=1, user_turns=1))
    user, worker = make_annotator("anna")
    response = write(job, worker)
    Response.objects.filter(pk=response.pk).update(status=Response.Status.REJECTED)
    client.force_login(user)
    assert status_cells(client.get(reverse("home")).content.decode()) == {"1": "Rejected (not paid)"}
