"""Builders for quality-control tests: a rewrite job with voting on, and workers who write and vote."""
from annotation.models import Job
from annotation.services.claims import claim_next_slot, submit_response
from annotation.services.voting import enable_voting, vote_job_of
from tests.factories import good_answers, make_corpus, make_live_job


def voting_job(dialogs=1, user_turns=1, **settings):
    job = make_live_job(make_corpus(dialogs=dialogs, user_turns=user_turns))
    vote_job = enable_voting(job, **settings)
    return job, vote_job


def write(job: Job, worker):
    """The worker claims and answers the next item of `job` with rewrites that pass the checks."""
    slot = claim_next_slot(job=job, worker=worker)
    assert slot is not None, f"{worker} found no item to rewrite"
    return submit_response(slot_id=slot.id, worker=worker, answers=good_answers(slot.item))


def vote(vote_job: Job, worker, verdict: str, reason=""):
    """The worker claims the next vote item and votes 'for' or 'against'; None when nothing is left."""
    slot = claim_next_slot(job=vote_job, worker=worker)
    if slot is None:
        return None
    return submit_response(slot_id=slot.id, worker=worker, answers={"vote": verdict, "reason": reason})


def refresh_vote_job(job):
    return vote_job_of(job)


def junk_answers(item):
    """Rewrites that pass every automatic check yet are no use: the paraphrase ends in keyboard mash."""
    answers = good_answers(item)
    answers["paraphrase"] = answers["paraphrase"].rstrip(".") + " qwrtzp sdfghj"
    return answers


def is_junk(text: str) -> bool:
    """What a careful voter notices: a 'word' of five or more letters without a vowel."""
    return any(len(w) >= 5 and w.isalpha() and not set(w.lower()) & set("aeiouy") for w in text.split())


def careful_verdict(vote_item) -> str:
    return "against" if any(is_junk(row["text"]) for row in vote_item.payload["shown"]) else "for"
