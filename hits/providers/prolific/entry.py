"""How a participant arrives from Prolific: the study URL's PROLIFIC_PID, STUDY_ID and SESSION_ID. Pure."""
from collections.abc import Mapping

from ..base import Entry, EntryError

URL_PARAMS = "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"


def parse(params: Mapping) -> Entry:
    """No parameters at all is a preview (Prolific's study page opens the URL bare)."""
    pid, study, session = (params.get(k, "") for k in ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID"))
    if not (pid or study or session):
        return Entry(preview=True)
    for name, value in (("PROLIFIC_PID", pid), ("STUDY_ID", study), ("SESSION_ID", session)):
        if not value or not value.isalnum() or len(value) > 64:
            raise EntryError(f"The link from Prolific has no usable {name}; open the study from Prolific again.")
    return Entry(False, study, session, pid, "")
