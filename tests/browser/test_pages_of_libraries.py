"""The pages Quorum takes from its libraries work under the site's Content-Security-Policy: the API's
docs (Swagger UI, its set-up script served as a file) and the admin. The `page` fixture fails the
test on any refusal Chromium reports."""
import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_api_docs_list_the_operations(page):
    page.goto("/api/docs/")
    expect(page.get_by_text("/api/jobs/", exact=True).first).to_be_visible()  # Swagger UI ran and read the schema
    expect(page.locator(".opblock").first).to_be_visible()


def test_the_admins_scripted_widgets_work_for_an_organizer(page, organizer_login):
    organizer_login("/admin/annotation/job/")
    expect(page.locator("#changelist")).to_be_visible()
    page.goto("/admin/annotation/job/add/")
    # filter_horizontal: the admin's script builds the two lists of annotators and their filter box
    expect(page.locator("#id_annotators_from")).to_be_visible()
    expect(page.locator("#id_annotators_input")).to_be_visible()
