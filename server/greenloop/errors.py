"""The one exception type for errors a user can act on."""


class GreenloopError(Exception):
    """Raised with a message that says what went wrong and what to do about it."""
