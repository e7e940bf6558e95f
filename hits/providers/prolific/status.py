"""Prolific's submission statuses in ProviderAssignment's terms (accepted, submitted, approved, rejected,
returned). Pure."""

STATUS = {
    "RESERVED": "accepted",
    "ACTIVE": "accepted",
    "AWAITING REVIEW": "submitted",
    "APPROVED": "approved",
    "PARTIALLY APPROVED": "approved",
    "REJECTED": "rejected",
    "RETURNED": "returned",
    "TIMED-OUT": "returned",
    "SCREENED OUT": "returned",
}
