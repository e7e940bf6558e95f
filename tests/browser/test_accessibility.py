"""Every page passes axe-core's automated accessibility rules (WCAG 2.x A and AA, and its best
practices) in Chromium: the organizer's pages with the data a first-time organizer meets after a
while, and the annotator's home and work pages. What axe finds is listed by page, rule and the first
offending element, so a failure says what to fix.

axe-core comes with axe-playwright-python (pinned in requirements.txt), which injects it into the page."""
import pytest
from playwright.sync_api import expect

from annotation.models import Item
from annotation.services.jobs import create_job, launch_job
from annotation.services.payload_jobs import create_payload_job
from tests.factories import good_answers, make_corpus

from .test_annotator_flow import claim_by_keyboard, log_in
from .test_organizer_pages_fit import _pages, default_data  # noqa: F401 - default_data is a fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _violations(page) -> list[str]:
    from axe_playwright_python.sync_playwright import Axe

    found = Axe().run(page).response["violations"]
    return [f"{v['impact']} {v['id']} ({v['help']}): {v['nodes'][0]['html'][:160]}" for v in found]


def test_organizer_pages_pass_axe(page, organizer_login, default_data):  # noqa: F811
    organizer_login("/organize/")
    expect(page.locator("#main h1").first).to_be_visible()
    pages = _pages(default_data)
    found = {}
    for path in pages + [f"/organize/jobs/{default_data['job'].pk}/review/?view=compact"]:
        page.goto(path)
        found[path] = _violations(page)
    assert {path: v for path, v in found.items() if v} == {}


def test_a_page_with_a_message_passes_axe(page, organizer_login, default_data):  # noqa: F811
    """The messages an action leaves on the next page (here an export's) are a list announced as a
    status: the role on the list itself hid that it is a list (axe: aria-allowed-role, listitem)."""
    organizer_login(f"/organize/jobs/{default_data['job'].pk}/")
    page.locator("#export-form button[type=submit]").first.click()
    expect(page.locator("ul.messages li").first).to_contain_text("Export")
    assert _violations(page) == []


def test_annotator_pages_pass_axe_and_fit_a_phone(page, make_annotator):
    """On a 390 px phone (crowd workers take work on phones too): no page wider than the screen. Every
    type's work page is held to the same in `test_every_task_page.py`."""
    make_annotator("ada")
    pair = {"context": [{"speaker": "user", "text": "Can I bring my dog?"}], "a": {"system": "A", "text": "Yes."}, "b": {"system": "B", "text": "No."}}
    launch_job(create_payload_job(name="Compare replies", task_type="pairwise", payloads=[pair]))
    rating = {"context": [{"speaker": "user", "text": "Can I bring my dog?"}], "response": "Yes, dogs are welcome.",
              "knowledge": [{"entity": "Alpha Hotel", "body": "Pets stay free."}]}
    launch_job(create_payload_job(name="Rate replies", task_type="likert", payloads=[rating]))
    dialog = {"dialog": [{"speaker": "user", "text": "Hi"}, {"speaker": "system", "text": "Hello! How can I help?"}]}
    launch_job(create_payload_job(name="FED dialogs", task_type="fed_dialog", payloads=[dialog]))
    launch_job(create_job(corpus=make_corpus(dialogs=1, user_turns=1), name="Rewrite turns"))
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto("/accounts/login/")
    found = {"login": _violations(page)}
    widths = {"login": _width(page)}
    log_in(page, "ada", "ada-pass-1")
    found["home"], widths["home"] = _violations(page), _width(page)
    # Each job's button is on the screen, not scrolled off beside a table too wide for it.
    edges = page.locator("table.jobs button").evaluate_all("buttons => buttons.map(b => b.getBoundingClientRect().right)")
    assert len(edges) == 4 and max(edges) <= 390, edges
    claim_by_keyboard(page, "Compare replies")  # the way there by keys; each type's page: test_every_task_page.py
    found["work"], widths["work"] = _violations(page), _width(page)
    assert {where: v for where, v in found.items() if v} == {}
    assert {where: w for where, w in widths.items() if w > 390} == {}


def _width(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth")


def test_a_phones_work_page_leaves_out_the_key_hints(chromium_browser, live_server, make_annotator):
    """On a touch screen (Chromium's phone emulation: no hover, a coarse pointer) no key can be pressed."""
    from .conftest import record_policy_violations

    make_annotator("ada")
    pair = {"context": [{"speaker": "user", "text": "Can I bring my dog?"}], "a": {"system": "A", "text": "Yes."}, "b": {"system": "B", "text": "No."}}
    launch_job(create_payload_job(name="Compare replies", task_type="pairwise", payloads=[pair]))
    phone = chromium_browser.new_context(base_url=live_server.url, viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    refused = record_policy_violations(phone)
    page = phone.new_page()
    log_in(page, "ada", "ada-pass-1")
    page.get_by_role("button", name="Next item: Compare replies").tap()
    expect(page.locator("#work-form")).to_be_visible()
    expect(page.locator("#key-hint")).to_be_hidden()
    assert page.locator("#key-hint").count() == 1 and not refused
    phone.close()


def test_a_phone_is_not_told_to_press_ctrl_enter(chromium_browser, live_server, make_annotator):
    from .conftest import record_policy_violations

    make_annotator("ada")
    corpus = make_corpus(dialogs=1, user_turns=1)
    launch_job(create_job(corpus=corpus, name="Rewrites"))
    phone = chromium_browser.new_context(base_url=live_server.url, viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    refused = record_policy_violations(phone)
    page = phone.new_page()
    log_in(page, "ada", "ada-pass-1")
    page.get_by_role("button", name="Next item: Rewrites").tap()
    expect(page.locator("#work-form[data-ready=true]")).to_be_visible()
    answers = good_answers(Item.objects.get())
    for name in ("paraphrase", "typos", "verbose", "simplified"):
        page.locator(f"#id_{name}").fill(answers[name])
    expect(page.locator("#check-status")).to_have_text("All checks pass. Press Submit.")
    assert not refused
    phone.close()
