"""`manage.py fed_results` prints a FED set's results as its page, CSV download and API give them:
the CSV byte for byte, the Markdown table cell for cell as the page writes them; an unknown or
unlaunched set is a clear error; stored results are read, not computed again."""
import io
import re
from html import unescape

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from annotation import task_types
from evaluation.fed import selectors
from evaluation.fed.services import import_fed_static, launch_fed_job

from .test_fed_results_stored import STATIC, rate

pytestmark = pytest.mark.django_db



def _command(*args) -> str:
    out = io.StringIO()
    call_command("fed_results", *args, stdout=out)
    return out.getvalue()


def _rated_set(make_annotator, level="dialog"):
    fed_set = import_fed_static(name="books", jsonl=STATIC, level=level)
    job = launch_fed_job(fed_set, raters=2)
    fields = [f for f in task_types.get(job.task_type).answer_fields(job.settings) if f.get("choices")]
    for name in ("ann", "bea"):
        rate(job, make_annotator(name)[1], fields)
    return fed_set


def test_the_command_prints_what_the_page_the_csv_and_the_api_show(make_annotator, organizer, monkeypatch):
    fed_set = _rated_set(make_annotator)
    markdown = _command("books")  # computes and stores the results: none were yet
    monkeypatch.setattr(selectors, "fed_report", lambda *a, **k: pytest.fail("stored results were computed again"))
    assert _command(str(fed_set.pk)) == markdown  # by id too, read as stored

    client = Client()
    client.force_login(organizer)
    download = client.get(reverse("evaluation:fed-results-csv", args=[fed_set.pk])).content.decode()
    api_csv = client.get(reverse("evaluation-api:fed-results", args=[fed_set.pk]), {"format": "csv"}).content.decode()
    assert _command("books", "--format", "csv") == download == api_csv

    page = client.get(reverse("evaluation:fed-set", args=[fed_set.pk])).content.decode()
    table = page.split('id="fed-results"')[1].split("</table>")[0]
    page_rows = [[" ".join(unescape(re.sub(r"<[^>]+>", "", cell)).split()) for cell in re.findall(r"<t[dh]>(.*?)</t[dh]>", row)]
                 for row in re.findall(r"<tr>(.*?)</tr>", table)]
    written = [[cell.strip() for cell in line.strip("|").split(" | ")] for line in markdown.splitlines() if line.startswith("| ")]
    assert written[:len(page_rows)] == page_rows  # header and every system's row, cell for cell
    assert "## books" in markdown and "## Agreement between raters" in markdown


def test_an_unknown_or_unlaunched_set_is_a_clear_error(make_annotator):
    with pytest.raises(CommandError, match=r"no FED set 'nope'; existing: none"):
        _command("nope")
    import_fed_static(name="waiting", jsonl=STATIC, level="dialog")
    with pytest.raises(CommandError, match=r"no FED set '99999'; existing: 'waiting'"):
        _command("99999")
    with pytest.raises(CommandError, match="has no FED job yet"):
        _command("waiting")
    with pytest.raises(CommandError):
        _command("waiting", "--format", "xlsx")
