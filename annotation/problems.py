"""What is wrong with an answer: one Problem type for every task type's validation. Pure."""
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Problem:
    """One thing to fix: the answer field it is about, a short code, and the message a worker reads."""

    field: str
    code: str
    message: str

    def as_dict(self) -> dict:
        return asdict(self)
