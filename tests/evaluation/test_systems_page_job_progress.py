"""The systems page lists each interactive job with how far it is: it read "DSTC round 1 (live)"
and nothing more, so an organizer opened each job to learn whether anyone had chatted yet. It now
says the dialogs collected of those planned, as the results page's run state counts them."""
from django.test import Client
from django.urls import reverse

from evaluation.interactive import selectors
from evaluation.interactive.services.chats import create_chat_job
from evaluation.interactive.services.systems import register_system
from evaluation.interactive.systems.reference import ReferenceSystem
from evaluation.stats import interactive

from .systems import chinese_centre_goals, running
from .test_interactive import _dialog

SECRET = "a-secret-of-twenty-chars"


def test_each_job_says_its_dialogs_collected_of_those_planned(db, organizer, make_annotator):
    goals = chinese_centre_goals()
    with running(ReferenceSystem(SECRET)) as url:
        system = register_system(name="ref", url=url, secret=SECRET)
        job = create_chat_job(name="DSTC round 1", systems=[system], goal_set=goals, dialogs_per_goal=3)
        _dialog(job, make_annotator("w"), ["I want chinese food in the centre"])
    client = Client()
    client.force_login(organizer)
    page = client.get(reverse("evaluation:systems")).content.decode()
    assert "DSTC round 1</a> <span class=\"muted\">(live: 1 of 3 dialogs collected)</span>" in page
    board, _dialogs = selectors.interactive_board(job)
    assert interactive.status_lines(board)[0].startswith("1 of 3 dialogs collected")  # the results page's count
