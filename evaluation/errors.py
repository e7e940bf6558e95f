"""The error evaluation's services raise for bad input, shared by every concern, and its one kind
whose fix is a choice rather than the input."""


class EvaluationInputError(ValueError):
    """Bad input: the message says what to fix; nothing was written."""


class RatingsAlreadyImported(EvaluationInputError):
    """The archive is fine, but the campaign has ratings of its entries: replacing them is the fix."""
