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


def unstorable_text(answers) -> list[Problem]:
    """A problem per text answer holding a character no database text can store (NUL, a lone
    surrogate), so it is refused with a reason rather than failing the write (issue 25)."""
    problems = []
    for name, value in (answers or {}).items():
        if not isinstance(value, str):
            continue
        if "\x00" in value:
            problems.append(Problem(name, "invalid", "The answer holds a NUL character; remove it and try again."))
            continue
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            problems.append(Problem(name, "invalid", "The answer holds an invalid character (a lone surrogate); retype it."))
    return problems
