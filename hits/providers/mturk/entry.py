"""How a worker arrives from MTurk: the ExternalQuestion's query parameters. Pure but for settings."""
import re
from collections.abc import Mapping

from django.conf import settings

from ..base import Entry, EntryError

PREVIEW_ASSIGNMENT = "ASSIGNMENT_ID_NOT_AVAILABLE"
SUBMIT_HOSTS = ("https://www.mturk.com", "https://workersandbox.mturk.com", "https://worker.mturk.com")
ID_PATTERN = re.compile(r"^[A-Z0-9]{1,64}$")


def parse(params: Mapping) -> Entry:
    """assignmentId, hitId, workerId and turkSubmitTo; a preview while the worker has not accepted."""
    assignment = params.get("assignmentId", "")
    hit = params.get("hitId", "")
    if not assignment or assignment == PREVIEW_ASSIGNMENT:
        return Entry(preview=True, posting_external_id=hit if ID_PATTERN.match(hit or "") else "")
    worker = params.get("workerId", "")
    submit_to = (params.get("turkSubmitTo", "") or "").rstrip("/")
    if not all(ID_PATTERN.match(v or "") for v in (assignment, hit, worker)):
        raise EntryError("The link from MTurk is missing assignmentId, hitId or workerId; open the HIT again.")
    allowed = tuple(settings.QUORUM_MTURK_SUBMIT_HOSTS or SUBMIT_HOSTS)
    if submit_to not in allowed:
        raise EntryError("turkSubmitTo is not an MTurk address; open the HIT from MTurk.")
    return Entry(False, hit, assignment, worker, submit_to)
