"""The pairwise type's contract (`contract.py`): ACUTE-Eval style comparisons of two systems' replies."""
from .contract import CONTEXT, HOSTILE, TaskTypeContract, payload_job

PAIR = {"context": CONTEXT, "instance": "dialog-1", "a": {"system": "team-a", "text": f"Yes, it has free parking. {HOSTILE}"}, "b": {"system": "team-b", "text": "I don't know."}}


class TestPairwise(TaskTypeContract):
    key = "pairwise"
    bad_fields = {"winner"}
    payload = PAIR
    comparison = (PAIR, {"winner": "b", "left": "a", "reason": ""}, {"winner": "", "left": "a"})
    cycle_queries = 11  # a counted comparison records the leaderboard refresh run it queues (evaluation's receiver): one INSERT ... ON CONFLICT DO NOTHING

    def make_job(self, make_annotator):
        return payload_job(self.key, [PAIR, {**PAIR, "instance": "dialog-2"}])

    def good_answers(self, item, n):
        return {"winner": ["a", "tie"][n % 2], "left": "a", "reason": "more helpful"}

    def bad_answers(self, item):
        return {"winner": "c", "left": "a"}
