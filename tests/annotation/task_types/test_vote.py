"""The vote type's contract (`contract.py`): its items are another job's responses, made by turning voting on."""
from annotation import task_types
from annotation.services.voting import enable_voting
from tests.factories import make_corpus, make_live_job

from ...quality.helpers import write
from .contract import HOSTILE, TaskTypeContract


class TestVote(TaskTypeContract):
    key = "vote"
    bad_fields = {"vote"}
    cycle_queries = 11  # a vote counts its review round in the submission: one UPDATE counts the stored votes in SQL, writes and locks the round

    def make_job(self, make_annotator):
        job = make_live_job(make_corpus(dialogs=2, user_turns=1))
        vote_job = enable_voting(job, votes_per_response=2, against_threshold=2)
        author = make_annotator("author")[1]
        write(job, author)
        write(job, author)  # two responses: two items to vote on
        return vote_job

    def good_answers(self, item, n):
        fields = task_types.get("vote").answer_fields(item.job.settings)
        votes = {f["name"]: ["for", "against"][(n + i) % 2] for i, f in enumerate(fields) if f.get("choices")}
        return {**votes, "reason": f"fine {HOSTILE}"}

    def bad_answers(self, item):
        first = task_types.get("vote").answer_fields(item.job.settings)[0]["name"]
        self.bad_fields = {first}
        return {first: "maybe"}
