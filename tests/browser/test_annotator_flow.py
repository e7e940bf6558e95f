"""An annotator's session in a real browser, by keyboard alone: log in, claim, rewrite, be refused,
fix, save, get the next item; and user text that looks like HTML stays text."""
import re

import pytest
from playwright.sync_api import expect

from annotation.models import Corpus, Dialog, Response, Turn
from annotation.services.jobs import create_job, launch_job

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

HOTEL = "I need a cheap hotel in the centre for 4 people."


def make_job(name, turns, instructions="Rewrite the last user turn four ways. Keep the marked values."):
    """A live rewrite job over one dialog; `turns` are (speaker, text, [slot values])."""
    corpus = Corpus.objects.create(name=f"corpus of {name}", source_format="jsonl")
    dialog = Dialog.objects.create(corpus=corpus, external_id="d0", position=0)
    for index, (speaker, text, values) in enumerate(turns):
        Turn.objects.create(
            dialog=dialog, index=index, speaker=speaker, text=text, slot_values=[{"slot": "s", "value": v} for v in values]
        )
    return launch_job(create_job(corpus=corpus, name=name, instructions=instructions))


def focused(page) -> str:
    return page.evaluate("document.activeElement && (document.activeElement.id || document.activeElement.textContent.trim())")


def tab_to(page, locator, limit=15):
    """Press Tab until `locator` has the focus, as a keyboard user would."""
    for _ in range(limit):
        if locator.evaluate("el => el === document.activeElement"):
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"could not reach {locator} with Tab; focus is on {focused(page)!r}")


def log_in(page, username, password):
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/accounts/login/\?next=/$"))
    expect(page.locator("#id_username")).to_be_focused()
    page.keyboard.type(username)
    page.keyboard.press("Tab")
    page.keyboard.type(password)
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name=f"Hello, {username}")).to_be_visible()


def claim_by_keyboard(page, job_name):
    button = page.get_by_role("button", name=f"Next item: {job_name}", exact=True)
    tab_to(page, button)
    page.keyboard.press("Enter")
    wait_until_ready(page)


def wait_until_ready(page):
    """The work page is shown and its script has attached its listeners (typing is counted from here)."""
    expect(page.locator("#work-form[data-ready=true]")).to_be_visible()


def replace_text(page, text):
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.type(text)


def test_rewrite_by_keyboard_refused_then_saved_then_next_item(page, dialogs, make_annotator):
    _user, worker = make_annotator("anna")
    make_job(
        "Hotel rewrites",
        [
            ("user", HOTEL, ["cheap", "centre", "4 people"]),
            ("system", "Which day would you like to arrive?", []),
            ("user", "Monday, and for 4 people please.", ["Monday", "4 people"]),
        ],
    )
    log_in(page, "anna", "anna-pass-1")
    expect(page.get_by_role("row", name=re.compile("Hotel rewrites"))).to_contain_text("2")
    claim_by_keyboard(page, "Hotel rewrites")

    # The item: the turn with its slot values marked, the values to keep, instructions, progress.
    target = page.locator("#target-turn")
    expect(target).to_contain_text(HOTEL)
    expect(target.locator("mark.slot")).to_have_text(["cheap", "centre", "4 people"])
    expect(page.locator("ul.keep mark.slot")).to_have_text(["cheap", "centre", "4 people"])
    expect(page.locator(".instructions")).to_contain_text("Keep the marked values.")
    expect(page.locator("#progress")).to_have_text("Item 1 of 2 · you have saved 0 responses in this job")

    # Keyboard: the first field has the focus, and Tab walks the fields, then Submit, then Skip.
    expect(page.locator("#id_paraphrase")).to_be_focused()
    order = []
    for _ in range(5):
        page.keyboard.press("Tab")
        order.append(focused(page))
    assert order == ["id_typos", "id_verbose", "id_simplified", "submit-button", "skip-button"]
    for _ in range(5):
        page.keyboard.press("Shift+Tab")
    expect(page.locator("#id_paraphrase")).to_be_focused()

    # Type a bad set; the server's checks answer while typing.
    page.keyboard.type(HOTEL)  # unchanged
    expect(page.locator("#problems_paraphrase")).to_contain_text("the rewrite is the same as the original")
    expect(page.locator("#id_paraphrase")).to_have_attribute("aria-invalid", "true")
    page.keyboard.press("Tab")
    page.keyboard.type("I ned a cheep hotel in teh centre for 4 people.")  # "cheap" lost
    expect(page.locator("#problems_typos")).to_contain_text('keep the slot value "cheap" exactly as written')
    page.keyboard.press("Tab")
    page.keyboard.type("cheap centre 4 people")  # not longer
    expect(page.locator("#problems_verbose")).to_contain_text("use more words than the original")
    page.keyboard.press("Tab")
    page.keyboard.type("A cheap hotel, centre, 4 people, please.")  # fine
    expect(page.locator("#problems_simplified")).to_have_text("Looks good.")
    assert not Response.objects.exists()  # checking saves nothing

    # Submit anyway: refused, with every problem listed, and the text kept.
    page.keyboard.press("Control+Enter")
    summary = page.get_by_role("alert")
    expect(summary).to_contain_text("Not saved: fix 3 problems")
    wait_until_ready(page)
    expect(summary).to_contain_text("Typos: keep the slot value \"cheap\" exactly as written.")
    expect(page.locator("#id_paraphrase")).to_have_value(HOTEL)
    expect(page.locator("#id_typos")).to_have_value("I ned a cheep hotel in teh centre for 4 people.")
    expect(page.locator("#id_verbose")).to_have_value("cheap centre 4 people")
    expect(page.locator("#id_simplified")).to_have_value("A cheap hotel, centre, 4 people, please.")
    expect(page.locator("#id_paraphrase")).to_be_focused()  # the first field with a problem
    assert not Response.objects.exists()

    # Fix the three fields by keyboard and save.
    replace_text(page, "Please find me a cheap hotel in the centre for 4 people.")
    page.keyboard.press("Tab")
    replace_text(page, "I ned a cheap hotel in teh centre for 4 people.")
    page.keyboard.press("Tab")
    replace_text(page, "Hello, I would really like to book a cheap hotel somewhere in the centre of town for 4 people.")
    for name in ("paraphrase", "typos", "verbose", "simplified"):
        expect(page.locator(f"#problems_{name}")).to_have_text("Looks good.")
    expect(page.locator("#check-status")).to_have_text("All checks pass. Press Submit or Ctrl+Enter.")
    expect(page.locator("#problem-summary")).to_be_hidden()  # it no longer contradicts "Looks good"
    page.keyboard.press("Control+Enter")

    expect(page.locator("#saved-notice")).to_have_text("Saved. Here is your next item.")
    expect(page.locator("#progress")).to_have_text("Item 2 of 2 · you have saved 1 response in this job")
    expect(page.locator("#target-turn mark.slot")).to_have_text(["Monday", "4 people"])
    expect(page.locator("#id_paraphrase")).to_be_focused()
    expect(page.locator("#id_paraphrase")).to_have_value("")
    history = page.locator("ol.history > li")
    expect(history).to_have_count(3)
    expect(history.nth(0)).to_contain_text(HOTEL)
    expect(history.nth(1)).to_contain_text("System")

    response = Response.objects.get(worker=worker)
    assert response.answers["verbose"].startswith("Hello, I would really like")
    assert response.active_seconds is not None and response.active_seconds > 0
    assert dialogs == []


def test_markup_in_user_text_is_shown_as_text_and_never_runs(page, dialogs, make_annotator):
    make_annotator("bert")
    evil = "<script>alert(1)</script> a cheap room"
    make_job(
        "<script>alert('job')</script>",
        [
            ("system", "<img src=x onerror=alert(2)>", []),
            ("user", evil, ["cheap", "<b onmouseover=alert(3)>room</b>"]),
        ],
        instructions="<script>alert(4)</script>\nBe nice.",
    )
    log_in(page, "bert", "bert-pass-1")
    expect(page.get_by_role("row", name=re.compile("alert\\('job'\\)"))).to_be_visible()
    claim_by_keyboard(page, "<script>alert('job')</script>")

    expect(page.locator("#target-turn .utterance")).to_have_text(evil)
    expect(page.locator("ol.history > li").first).to_contain_text("<img src=x onerror=alert(2)>")
    expect(page.locator(".instructions")).to_contain_text("<script>alert(4)</script>")
    expect(page.locator("ul.keep mark.slot")).to_have_text(["cheap", "<b onmouseover=alert(3)>room</b>"])
    assert page.locator("#main script, #main img, #main b").count() == 0

    # Live messages quote the slot values; they are inserted as text too.
    page.keyboard.type("a room please")
    expect(page.locator("#problems_paraphrase")).to_contain_text('keep the slot value "<b onmouseover=alert(3)>room</b>"')
    assert page.locator("#problems_paraphrase b").count() == 0
    page.keyboard.press("Control+Enter")
    expect(page.get_by_role("alert")).to_contain_text("<b onmouseover=alert(3)>room</b>")
    expect(page.locator("#id_paraphrase")).to_have_value("a room please")
    assert page.locator("#main script, #main img, #main b").count() == 0
    page.wait_for_timeout(300)
    assert dialogs == []


GOOD = {
    "paraphrase": "Please find me a cheap hotel in the centre for 4 people.",
    "typos": "I ned a cheap hotel in teh centre for 4 people.",
    "verbose": "Hello, I would really like to book a cheap hotel somewhere in the centre of town for 4 people.",
    "simplified": "A cheap hotel, centre, 4 people, please.",
}


def test_a_second_tab_submitting_the_same_item_is_shown_the_text_that_was_kept(page, dialogs, make_annotator):
    make_annotator("anna")
    make_job("Hotel twice", [("user", HOTEL, ["cheap", "centre", "4 people"])])
    log_in(page, "anna", "anna-pass-1")
    claim_by_keyboard(page, "Hotel twice")
    second_tab = page.context.new_page()
    second_tab.goto(page.url)  # the same work link, open in two tabs
    expect(second_tab.locator("#work-form[data-ready=true]")).to_be_visible()
    for name, text in GOOD.items():
        page.locator(f"#id_{name}").fill(text)
        second_tab.locator(f"#id_{name}").fill(text.replace("Please find me", "Kindly find me"))
    page.locator("#submit-button").click()
    expect(page.get_by_role("heading", name=re.compile("Nothing left for you in"))).to_be_visible()

    second_tab.locator("#submit-button").click()
    expect(second_tab.get_by_role("heading", name="Already saved")).to_be_visible()
    expect(second_tab.locator("main")).to_contain_text("your first text was kept")
    expect(second_tab.locator("dl.saved dd").first).to_have_text(GOOD["paraphrase"])
    expect(second_tab.get_by_role("heading", name="Your text (not saved)")).to_be_visible()
    assert Response.objects.get().answers["paraphrase"] == GOOD["paraphrase"]


def test_back_from_the_work_page_shows_the_counts_as_they_are_now(page, make_annotator):
    make_annotator("bea")
    make_job(
        "Hotel rewrites",
        [("user", HOTEL, ["cheap", "centre", "4 people"]), ("system", "Which day?", []), ("user", "Monday for 4 people.", ["Monday", "4 people"])],
    )
    log_in(page, "bea", "bea-pass-1")
    row = page.get_by_role("row", name=re.compile("Hotel rewrites"))
    expect(row.locator('[data-label="Items for you"]')).to_have_text("2")
    claim_by_keyboard(page, "Hotel rewrites")
    page.locator("#id_paraphrase").fill("Please find me a cheap hotel in the centre for 4 people.")
    page.locator("#id_typos").fill("I ned a cheap hotel in teh centre for 4 people.")
    page.locator("#id_verbose").fill("Hello, I would really like to book a cheap hotel somewhere in the centre of town for 4 people.")
    page.locator("#id_simplified").fill("A cheap hotel, centre, 4 people, please.")
    page.locator("#submit-button").click()
    expect(page.locator("#saved-notice")).to_have_text("Saved. Here is your next item.")
    page.go_back()  # to the home page, as the browser's Back button does
    expect(page.get_by_role("heading", name="Hello, bea")).to_be_visible()
    # One item saved, the next one in hand: not the "2" the page said before the work began.
    expect(row.locator('[data-label="Items for you"]')).to_have_text("0 and the one you hold")
