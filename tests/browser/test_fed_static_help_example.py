"""A first-time organizer on the FED page learns the static file's shape from the form itself: the
help under "JSONL file" shows a whole line (a context's turns with their speakers, a response per
system), and that line, saved as a file and uploaded, is imported as it stands."""
import json
import re

import pytest
from playwright.sync_api import expect

from evaluation.models import FedSet

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_static_files_help_shows_a_line_that_imports_as_it_stands(page, organizer_login):
    organizer_login("/evaluation/fed/")
    form = page.locator("#fed-static-form")
    help_text = form.locator(".field", has=page.get_by_label("JSONL file")).locator(".help").inner_text()
    example = re.search(r"(\{\"context_id\".*\}\})", help_text)
    assert example, f"no example line in the help: {help_text!r}"
    line = json.loads(example.group(1))
    assert {t["speaker"] for t in line["context"]} <= {"user", "system"} and len(line["responses"]) >= 2
    form.get_by_label("Name").fill("From the example")
    form.get_by_label("JSONL file").set_input_files({"name": "example.jsonl", "mimeType": "application/json", "buffer": example.group(1).encode()})
    form.get_by_role("button", name="Import and filter").click()
    expect(page.locator(".messages")).to_contain_text(f"“From the example”: {len(line['responses'])} to rate")
    assert FedSet.objects.get(name="From the example").candidates.count() == len(line["responses"])
