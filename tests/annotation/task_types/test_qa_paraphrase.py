"""The QA-paraphrase type's contract (`contract.py`): CGoDial's question paraphrases."""
from .contract import HOSTILE, TaskTypeContract, payload_job

QA = {"id": "faq-1", "question": f"Is there free parking at the hotel? {HOSTILE}", "answer": "Yes, parking is free."}
PARAPHRASES = [
    "Can I park for free at the hotel?", "Does the hotel offer parking without charge?", "Is parking at the hotel free of charge?",
    "Do guests pay for parking at this hotel?", "Will parking my car there cost anything?", "Is there a parking fee at the hotel?",
    "Can guests leave their car at the hotel for nothing?", "Does it cost money to park at the hotel?", "Is the hotel car park free?",
]


class TestQaParaphrase(TaskTypeContract):
    key = "qa_paraphrase"
    bad_fields = {"paraphrase_1", "paraphrase_3"}
    payload = QA

    def make_job(self, make_annotator):
        return payload_job(self.key, [QA, {**QA, "id": "faq-2"}], count=3)

    def good_answers(self, item, n):
        return {f"paraphrase_{i + 1}": PARAPHRASES[(3 * n + i) % 9] for i in range(3)}

    def bad_answers(self, item):
        return {"paraphrase_1": item.payload["question"], "paraphrase_2": PARAPHRASES[0], "paraphrase_3": PARAPHRASES[0] + "!"}
