"""The one error evaluation's services raise for bad input, shared by every concern."""


class EvaluationInputError(ValueError):
    """Bad input: the message says what to fix; nothing was written."""
