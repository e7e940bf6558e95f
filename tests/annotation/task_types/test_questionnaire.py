"""The questionnaire presets' contracts (`contract.py`): answers and gold are read off each preset's questions."""
from tests.factories import make_corpus, make_live_job

from .contract import CONTEXT, HOSTILE, QuestionnaireContract, payload_job

LIKERT_PAYLOAD = {"context": CONTEXT, "response": f"Yes, free parking. {HOSTILE}", "knowledge": [{"entity": "Lovell Lodge", "title": "Parking", "body": "Free parking."}]}


class TestHardScore(QuestionnaireContract):
    key = "hard_score"

    def make_job(self, make_annotator):
        return make_live_job(make_corpus(dialogs=2, user_turns=1), task_type="hard_score", redundancy=2)


class TestLikert(QuestionnaireContract):
    key = "likert"
    payload = LIKERT_PAYLOAD
    cycle_queries = 11  # FeedsRatings: the campaign item its rating belongs to

    def make_job(self, make_annotator):
        return payload_job(self.key, [LIKERT_PAYLOAD, {**LIKERT_PAYLOAD, "response": "No."}])


class TestFedTurn(QuestionnaireContract):
    key = "fed_turn"
    payload = {"context": CONTEXT, "response": "Parking is free."}

    def make_job(self, make_annotator):
        return payload_job(self.key, [{"context": CONTEXT, "response": f"Parking is free. {HOSTILE}"}, {"context": CONTEXT, "response": "It costs extra."}])


class TestFedDialog(QuestionnaireContract):
    key = "fed_dialog"
    payload = {"dialog": [*CONTEXT, {"speaker": "system", "text": "Parking is free."}]}

    def make_job(self, make_annotator):
        dialog = [*CONTEXT, {"speaker": "system", "text": f"Parking is free. {HOSTILE}"}]
        return payload_job(self.key, [{"dialog": dialog}, {"dialog": dialog[:2]}])
