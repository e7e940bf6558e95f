"""The chat type's contract (`contract.py`): a conversation relayed to a system, then judged. Its pages
run with a relay that needs no system (`environment`)."""
from .contract import HOSTILE, TaskTypeContract, payload_job


def _scripted_relay():
    from annotation.chat_relay import ChatRelay

    class ScriptedRelay(ChatRelay):
        """A relay that needs no system: every conversation already holds one exchange, and stays
        open until it is ended (an ended one disables the page's message box, as a real one does)."""

        def transcript(self, endpoint, session_key, ended=False):
            return {"turns": [{"role": "user", "text": f"a cheap place {HOSTILE}", "failed": False, "offered": None},
                              {"role": "system", "text": f"Golden Wok. {HOSTILE}", "failed": False, "offered": {"name": "Golden Wok"}}],
                    "ended": ended}

        def open(self, endpoint, session_key, goal):  # the page opens the conversation on load
            return self.transcript(endpoint, session_key)

        def say(self, endpoint, session_key, text):
            return self.transcript(endpoint, session_key)

        def end(self, endpoint, session_key, reason):
            return self.transcript(endpoint, session_key, ended=True)

    return ScriptedRelay()


CHAT = {"goal": {"restaurant": {"info": {"food": "chinese"}}}, "goal_text": [f"Find a chinese restaurant. {HOSTILE}"], "goal_id": "g1", "endpoint": "e1", "relay": "contract-test"}


class TestChat(TaskTypeContract):
    key = "chat"
    bad_fields = {"outcome_reason", "understanding", "appropriateness_reason"}
    payload = CHAT
    opens_on_text = True  # the worker chats before judging: the page opens in the message box

    def environment(self):
        from annotation.extensions import chat_relays

        return chat_relays.override("contract-test", _scripted_relay())

    def make_job(self, make_annotator):
        return payload_job(self.key, [CHAT, {**CHAT, "endpoint": "e2"}])

    def good_answers(self, item, n):
        return {"outcome": ["success", "fail"][n % 2], "outcome_reason": "no booking" if n % 2 else "",
                "understanding": str(4 + n % 2), "understanding_reason": "got the food type",
                "appropriateness": "3", "appropriateness_reason": "terse"}

    def bad_answers(self, item):
        return {"outcome": "fail", "understanding": "9", "appropriateness": "3"}



def test_success_or_fail_is_measured_as_categories_and_the_ratings_as_a_scale():
    """The organizer's walk: a chat job's agreement on Success/Fail read "ordinal"."""
    from annotation import task_types

    kind = task_types.get("chat")
    settings = kind.clean_settings({})
    assert task_types.agreement_level_of(kind, "outcome", settings) == "nominal"
    assert task_types.agreement_level_of(kind, "understanding", settings) == "ordinal"


def test_the_combined_items_readme_says_what_failed_calls_counts(db, tmp_path):
    """items.csv's failed_calls counts the system's failed calls, not Quorum's own replies to a paused
    or busy system (0558b6b), and the README says so; the column is named as the leaderboard's CSV names
    it (it was failed_turns, which read as every failed turn)."""
    import csv

    from annotation import chat_relay
    from annotation.services.exports import export_job
    from tests.annotation.test_exports import respond

    job = payload_job("chat", [CHAT])
    transcript = [{"role": "user", "text": "chinese please", "failed": False, "offered": None},
                  {"role": "system", "text": "Sorry, something went wrong.", "failed": True, "offered": None},
                  {"role": "user", "text": "hello?", "failed": False, "offered": None},
                  {"role": "system", "text": chat_relay.UNAVAILABLE, "failed": True, "offered": None}]
    respond(job.items.get(), "w", answers={"outcome": "fail", "outcome_reason": "it stopped", "transcript": transcript})
    export_job(job, tmp_path / "out")

    with open(tmp_path / "out" / "items.csv", encoding="utf-8") as fh:
        assert [row["failed_calls"] for row in csv.DictReader(fh)] == ["1"]
    readme = (tmp_path / "out" / "README.md").read_text(encoding="utf-8")
    line = next(line for line in readme.splitlines() if line.lstrip("-* ").startswith("`failed_calls`"))
    assert "calls to the system that failed" in line and "Failed calls" in line and "paused or busy" in line
