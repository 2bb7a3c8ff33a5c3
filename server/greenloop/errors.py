"""The project's exception types for errors a user can act on, each with the CLI exit code it means."""


class GreenloopError(Exception):
    """Raised with a message that says what went wrong and what to do about it.

    As such, a usage error: the command line or the settings ask for something impossible (exit 2).
    """

    exit_code = 2


class EnvironmentProblem(GreenloopError):
    """What greenloop needs is missing or broken here: no sandbox backend, no model, a model server
    that does not start or answer (exit 3)."""

    exit_code = 3
