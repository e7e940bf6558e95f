"""The out-of-scope type's contract (`contract.py`): CGoDial's inserted out-of-scope turns."""
from tests.factories import make_corpus, make_live_job

from .contract import HOSTILE, TaskTypeContract


class TestOutOfScope(TaskTypeContract):
    key = "oos_insert"
    bad_fields = {"utterance"}
    corpus_settings = {"insert_probability": 1.0}
    bad_setting_files = {"qa_pairs": "{not json"}

    def make_job(self, make_annotator):
        qa = [{"question": f"Is there parking? {HOSTILE}", "answer": "Yes, free parking."}]
        settings = {"insert_probability": 1.0, "qa_pairs": qa}
        return make_live_job(make_corpus(dialogs=2, user_turns=2), task_type="oos_insert", redundancy=2, settings=settings)

    def good_answers(self, item, n):
        return {"utterance": ["What is the capital of Peru?", f"My cat sings at night. {HOSTILE}"][n % 2]}

    def bad_answers(self, item):
        return {"utterance": item.payload["next_turn"]}  # an in-scope turn of the dialog
