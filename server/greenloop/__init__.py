"""greenloop: turns red tests green from inside the editor."""

__version__ = "0.1.0"
