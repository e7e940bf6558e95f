"""The flag run fits and stores the reliability model and adds its flags (issue 22)."""
import pytest

from annotation.models import JobReliability, ReviewRound
from annotation.selectors.flags import stored_flags
from annotation.selectors.reliability import stored_reliability, vote_job_reliability
from annotation.services.claims import claim_next_slot, submit_response
from annotation.services.quality import apply_flags

from .helpers import careful_verdict, junk_answers, voting_job, write

pytestmark = pytest.mark.django_db


def _codes(flags, worker):
    return {f.code for f in flags.report.workers.get(worker.pk, [])}


@pytest.fixture
def crowd(make_annotator):
    return {name: make_annotator(name)[1] for name in ("good", "careless", "v1", "v2", "yes_man")}


def _run(crowd, dialogs=12):
    from annotation.services.voting import enable_voting
    from tests.factories import good_answers, make_corpus, make_live_job

    job = make_live_job(make_corpus(name=f"restaurants-{dialogs}", dialogs=dialogs, user_turns=2))
    vote_job = enable_voting(job)

    for _ in range(dialogs):
        for writer, answers in ((crowd["good"], good_answers), (crowd["careless"], junk_answers)):
            slot = claim_next_slot(job=job, worker=writer)
            if slot is not None:
                submit_response(slot_id=slot.id, worker=writer, answers=answers(slot.item))
    for voter in ("v1", "v2", "yes_man"):
        while (slot := claim_next_slot(job=vote_job, worker=crowd[voter])) is not None:
            verdict = "for" if voter == "yes_man" else careful_verdict(slot.item)
            submit_response(slot_id=slot.id, worker=crowd[voter], answers={"vote": verdict})
    return job, vote_job


def test_the_sweep_stores_the_model_and_flags_the_always_yes_voter_and_the_careless_writer(crowd):
    job, vote_job = _run(crowd)
    assert ReviewRound.objects.filter(item__job=job, state=ReviewRound.State.RECOLLECTED).exists()
    apply_flags(vote_job)
    apply_flags(job)
    fit = stored_reliability(vote_job)
    assert fit is not None and fit.labels == ["against", "for"]
    assert vote_job_reliability(job) == fit
    yes_man = fit.worker(crowd["yes_man"].pk)
    assert yes_man["spammer_score"] < 0.2 and fit.worker(crowd["v1"].pk)["spammer_score"] > 0.8
    voter_flags = stored_flags(vote_job)
    assert "unreliable_voter" in _codes(voter_flags, crowd["yes_man"])
    assert not _codes(voter_flags, crowd["v1"]) & {"unreliable_voter"}
    message = next(f.message for f in voter_flags.report.workers[crowd["yes_man"].pk] if f.code == "unreliable_voter")
    assert 'answered "for" to' in message and "spammer score" in message
    writer_flags = stored_flags(job)
    assert "voted_down" in _codes(writer_flags, crowd["careless"])
    assert "voted_down" not in _codes(writer_flags, crowd["good"])
    writers = fit.writers
    assert writers[str(crowd["careless"].pk)]["usable"] < 0.2 < 0.8 < writers[str(crowd["good"].pk)]["usable"]
    # A task of the vote job is a voted part of a response of the reviewed job.
    task, row = next(iter(fit.tasks.items()))
    assert task.split(":")[0].isdigit() and row["outcome"] in ("for", "against")


def test_a_job_without_categorical_answers_stores_no_model(crowd):
    job, _ = voting_job()
    write(job, crowd["good"])
    apply_flags(job)
    assert not JobReliability.objects.filter(job=job).exists()
