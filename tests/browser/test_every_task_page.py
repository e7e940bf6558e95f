"""The page-level promises, held for every registered task type on the job its own contract test
makes (`tests/annotation/task_types/test_<key>.py`, found by `contracts()`): the work page passes
axe-core on a phone's width and is no wider than it, and a page that offers choices takes a digit
pressed straight after it loads as a choice, not as text. One browser, one annotator's session for
the axe walk, one tab per type for the keys."""
import contextlib

import pytest
from django.db.models import CharField, Value
from django.db.models.functions import Cast, Concat
from playwright.sync_api import expect

from annotation import task_types
from annotation.models import Corpus
from annotation.services.claims import claim_next_slot
from annotation.task_types import default_settings
from annotation.work_tokens import make_token
from tests.annotation.task_types.contract import contract_for, contract_params

from .test_accessibility import _violations, _width
from .test_annotator_flow import log_in, wait_until_ready

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = 390


def _offers_choices(key) -> bool:
    kind = task_types.get(key)
    return any(f.get("choices") and not f.get("hidden") for f in kind.answer_fields(default_settings(kind)))


def _open_work_page(page, key, make_annotator, worker):
    contract = contract_for(key)
    job = contract.make_job(make_annotator)
    slot = claim_next_slot(job=job, worker=worker)
    assert slot is not None, f"{key}: the contract's job offered no item"
    page.goto(f"/work/{make_token(slot)}/")
    wait_until_ready(page)


def _rename_corpora():
    Corpus.objects.update(name=Concat("name", Value("-"), Cast("pk", CharField())))


def test_every_task_page_passes_axe_and_fits_a_phone(page, make_annotator):
    _user, worker = make_annotator("ada")
    page.set_viewport_size({"width": PHONE, "height": 844})
    log_in(page, "ada", "ada-pass-1")
    found, widths = {}, {}
    with contextlib.ExitStack() as environments:
        for key in sorted(task_types.registry()):  # a page needs no speech tools, only a reading's good answers do
            environments.enter_context(contract_for(key).environment())
            _open_work_page(page, key, make_annotator, worker)
            found[key], widths[key] = _violations(page), _width(page)
            _rename_corpora()  # the next type's corpus takes the factory's name again
    assert set(found) == set(task_types.registry())
    assert {key: v for key, v in found.items() if v} == {}
    assert {key: w for key, w in widths.items() if w > PHONE} == {}


@pytest.mark.parametrize("key", [p for p in contract_params() if _offers_choices(p.values[0])])
def test_a_digit_straight_after_load_picks_a_choice(page, make_annotator, key):
    """What the key hint promises, before the worker clicks anywhere: the digit lands on the page's
    first choice, and no text field takes it as a character."""
    _user, worker = make_annotator("kit")
    log_in(page, "kit", "kit-pass-1")
    with contract_for(key).environment():
        _open_work_page(page, key, make_annotator, worker)
        # The page names its first field; on a loaded machine the press can otherwise reach the page
        # before the focus does, which no person's first key can.
        expect(page.locator("#work-form :focus")).to_have_count(1)
        page.keyboard.press("1")
        typed = page.locator("#work-form textarea, #work-form input[type=text]").evaluate_all("fields => fields.map(f => f.value)")
        if contract_for(key).opens_on_text:  # e.g. a chat: the worker writes first, and the digit is text
            expect(page.locator("#work-form input[type=radio]:checked")).to_have_count(0)
            assert "1" in typed, f"{key}: the page should open in its text box"
            return
        expect(page.locator("#work-form input[type=radio]:checked")).to_have_count(1)
        assert "1" not in typed, f"{key}: the digit was typed into a text field"
