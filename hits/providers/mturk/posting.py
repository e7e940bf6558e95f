"""How MTurk work is split and what a HIT asks for. Pure."""
from xml.sax.saxutils import escape

from ...policy.costs import split_into_postings

QUESTION_XML = (
    '<ExternalQuestion xmlns="http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2006-07-14/'
    'ExternalQuestion.xsd"><ExternalURL>{url}</ExternalURL><FrameHeight>0</FrameHeight></ExternalQuestion>'
)


def sizes(assignments: int, per_hit: int) -> list[int]:
    """HITs of `per_hit` assignments (the job's assignments_per_posting; 10 or more raises the fee)."""
    return split_into_postings(assignments, per_hit)


def external_question(url: str) -> str:
    return QUESTION_XML.format(url=escape(url))


def hit_type_params(config, job) -> dict:
    """CreateHITType's parameters for the job (QualificationRequirements are added by the caller)."""
    return {
        "AutoApprovalDelayInSeconds": int(config.auto_approval_days) * 86400,
        "AssignmentDurationInSeconds": max(60, int(job.claim_timeout_minutes) * 60),
        "Reward": f"{job.reward:.2f}",
        "Title": (config.title or job.name)[:128],
        "Keywords": "dialog, rewrite, text, quorum",
        "Description": (config.description or job.instructions or job.name)[:2000],
    }
