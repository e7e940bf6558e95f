"""Errors the work-loop services raise, in a module of their own so that every service can raise
them without importing the claims service (which imports the others)."""


class ClaimError(Exception):
    """The worker cannot work on this slot (any more); the message says why."""


class ResponseRejected(Exception):
    """The response failed validation; nothing was saved. `problems` say what to fix."""

    def __init__(self, problems):
        self.problems = list(problems)
        super().__init__("; ".join(p.message for p in self.problems))
