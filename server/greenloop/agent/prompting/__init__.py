"""Prompting: what the model is shown (prompt files, failures and code as text), and code read back out of its replies."""
