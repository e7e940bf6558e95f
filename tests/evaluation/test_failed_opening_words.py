"""A system whose opening fails: the worker, who has sent nothing yet, read "Please send your message
again"; the fallback of a failed opening now asks for their first message, and a failed later turn
still asks to send the message again."""
from django.test import Client
from django.urls import reverse

from annotation.services.claims import claim_next_slot
from annotation.work_tokens import make_token
from evaluation.interactive.services.chats import create_chat_job
from evaluation.interactive.services.systems import import_goals, register_system
from evaluation.interactive.systems.reference import ReferenceSystem

from .systems import running

SECRET = "a-secret-of-twenty-chars"


class SilentOpening(ReferenceSystem):
    """Answers every request but the opening once `silent` is set (after the contract check passed)."""

    silent = False

    def handle(self, environ):
        if self.silent and environ.get("PATH_INFO", "").rstrip("/") == "/sessions":
            return "500 Internal Server Error", {"error": "boom"}
        return super().handle(environ)


def test_a_failed_opening_asks_for_the_first_message(db, make_annotator):
    goals = import_goals(name="goals", goals_file=b'{"id": "g1", "goal": {"restaurant": {"info": {"food": "chinese"}}}}\n')
    system = SilentOpening(SECRET)
    with running(system) as url:
        job = create_chat_job(name="chat", systems=[register_system(name="quiet", url=url, secret=SECRET)], goal_set=goals)
        system.silent = True
        user, worker = make_annotator("w")
        client = Client()
        client.force_login(user)
        chat = reverse("work-chat", args=[make_token(claim_next_slot(job=job, worker=worker))])
        opened = client.post(chat, {"action": "open"}, content_type="application/json").json()
        said = client.post(chat, {"action": "say", "text": "chinese food please"}, content_type="application/json").json()

    opening, = opened["turns"]
    assert opening["failed"] and opening["text"] == "Sorry, the system did not answer. Write your first message: it may answer that."
    assert "send your message again" not in opening["text"]
    assert not said["turns"][-1]["failed"] and "Golden Wok" in said["turns"][-1]["text"]  # the system answers the first message
