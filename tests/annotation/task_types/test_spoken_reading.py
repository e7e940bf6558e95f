"""The spoken-reading type's contract (`contract.py`): recordings of a user turn, its answers are files."""
import pytest

from tests.factories import make_corpus, make_live_job

from .contract import TaskTypeContract


@pytest.mark.speech  # recordings synthesised with espeak-ng
class TestSpokenReading(TaskTypeContract):
    """Readings are upload fields: the good answers are recordings synthesised in the test run, the
    bad ones a silent recording and a missing one."""

    key = "spoken_reading"
    bad_fields = {"reading_1", "reading_2"}
    cycle_queries = 11  # each reading's row is written with the response (its transcription queued by the ids written)

    def make_job(self, make_annotator):
        return make_live_job(make_corpus(dialogs=2, user_turns=1), task_type="spoken_reading", redundancy=2, settings={"readings": 2})

    def good_answers(self, item, n):
        from ..spoken_audio import readings_of

        return readings_of(item.payload["utterance"], 2)

    def bad_answers(self, item):
        from ..spoken_audio import silence, upload

        return {"reading_1": upload("reading_1", silence())}  # reading_2 not recorded
