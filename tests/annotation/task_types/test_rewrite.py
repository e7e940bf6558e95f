"""The rewrite type's contract (`contract.py`): RADDLE's four variations of a user turn."""
from tests.factories import good_answers, make_corpus, make_live_job

from .contract import TaskTypeContract


class TestRewrite(TaskTypeContract):
    key = "rewrite"
    bad_fields = {"paraphrase"}
    bad_setting_files = {"entities": "slot\nno value column\n"}

    def make_job(self, make_annotator):
        return make_live_job(make_corpus(dialogs=2, user_turns=1), redundancy=2)

    def good_answers(self, item, n):
        return good_answers(item)

    def bad_answers(self, item):
        return {**good_answers(item), "paraphrase": item.payload["utterance"]}  # not a paraphrase
