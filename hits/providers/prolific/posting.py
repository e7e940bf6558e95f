"""What a Prolific study asks for. Pure: one study carries every place of a posting."""
import math

from .entry import URL_PARAMS
from .fees import minor_units
from .requirements import filters


def study_body(posting, config, *, entry_url: str, completion_code: str, req: dict, blocked_ids) -> dict:
    """The body of POST /api/v1/studies/ for an intended posting; internal_name is its request token, so
    a repeat can find the study an interrupted call made."""
    job = config.job
    return {
        "name": (config.title or job.name)[:120],
        "internal_name": posting.request_token,
        "description": config.description or job.instructions or job.name,
        "external_study_url": f"{entry_url}?{URL_PARAMS}",
        "prolific_id_option": "url_parameters",
        "completion_codes": [
            {"code": completion_code, "code_type": "COMPLETED", "actions": [{"action": "MANUALLY_REVIEW"}]}
        ],
        "total_available_places": int(posting.assignments),
        "estimated_completion_time": max(1, math.ceil(config.minutes_per_assignment)),
        "reward": minor_units(posting.reward),  # the whole cents its reservation priced
        "device_compatibility": ["desktop"],
        "filters": filters(req, blocked_ids=blocked_ids),
    }
