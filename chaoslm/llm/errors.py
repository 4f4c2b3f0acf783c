"""The typed errors the gateway raises. Each message says what happened and what a person can do."""


class LLMError(Exception):
    """Base class: `str(error)` is a message fit to show a user."""


class LLMTimeout(LLMError):
    pass


class LLMUnavailable(LLMError):
    """The endpoint could not be reached or kept failing with server errors."""


class LLMRateLimited(LLMError):
    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class LLMBadResponse(LLMError):
    """The model answered, but not in the form asked for (for example no valid JSON after three tries)."""

    def __init__(self, message: str, last_text: str = "", *, echoed: bool = False) -> None:
        super().__init__(message)
        self.last_text = last_text
        self.echoed = echoed  # the last reply was its prompt given back (chaoslm/llm/echo.py), not a bad format


class LLMConfigError(LLMError):
    """The request was refused: wrong key, unknown model, bad endpoint. Retrying will not help."""
