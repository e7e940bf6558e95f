"""The quality forms of a job's page, in Chromium, as a builder uses them: voting turned on with its
settings (the vote job is linked); a gold item added by the item's number as the review queue and the
preview show it, after a number the job does not have is refused with the range it has; the quality
settings saved after an out-of-range rate is refused under its field, with nothing changed."""
import pytest
from playwright.sync_api import expect

from annotation.models import Item, QualityPolicy
from tests.factories import good_answers, make_corpus, make_live_job

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_builder_turns_voting_on_adds_a_gold_item_by_its_number_and_sets_quality(page, dialogs, organizer_login):
    job = make_live_job(make_corpus(dialogs=2, user_turns=2), name="Hotel rewrites")
    third = Item.objects.get(job=job, position=2)
    organizer_login(f"/organize/jobs/{job.pk}/")

    quality = page.locator("#quality")
    quality.get_by_text("Voting settings").click()
    quality.get_by_label("Voting on").check()
    quality.get_by_label("Votes per response").fill("2")
    quality.get_by_label("Votes against to re-collect").fill("2")
    quality.get_by_role("button", name="Save voting").click()
    expect(page.locator(".messages")).to_contain_text("Voting is on")
    expect(page.locator("#vote-job-link")).to_have_text("Hotel rewrites · votes")
    policy = QualityPolicy.objects.get(job=job)
    assert policy.voting_enabled and (policy.votes_per_response, policy.against_threshold) == (2, 2)

    gold = page.locator("#gold")
    gold.get_by_text("Add a gold item").click()
    answers = good_answers(third)
    gold.get_by_label("Item", exact=True).fill("9")  # the job has four items
    gold.get_by_label("Known answer: Paraphrase").fill(answers["paraphrase"])
    gold.get_by_role("button", name="Add gold item").click()
    expect(page.locator("#gold")).to_contain_text("This job has no item 9: its items are numbered 1 to 4.")
    assert not Item.objects.filter(job=job, gold__isnull=False).exists()
    gold.get_by_label("Item", exact=True).fill("3")  # "item 3" as the review queue and the preview say
    gold.get_by_role("button", name="Add gold item").click()
    expect(page.locator(".messages")).to_contain_text("Added gold item 5 (a copy of item 3)")
    added = Item.objects.get(job=job, gold__isnull=False)
    assert added.payload == third.payload and added.gold == {"paraphrase": answers["paraphrase"]}
    expect(page.locator("#gold-items")).to_contain_text("item 5")

    settings = page.locator("#quality-settings")
    settings.get_by_text("Change the quality settings").click()
    settings.get_by_label("Gold start rate").fill("1.5")  # a share: the browser does not send it past its max
    settings.get_by_role("button", name="Save quality settings").click()
    assert QualityPolicy.objects.get(job=job).gold_start_rate == policy.gold_start_rate
    settings.get_by_label("Gold start rate").fill("0.2")
    settings.get_by_role("button", name="Save quality settings").click()
    expect(page.locator(".messages")).to_contain_text("Quality settings saved.")
    assert QualityPolicy.objects.get(job=job).gold_start_rate == 0.2
    assert dialogs == []
