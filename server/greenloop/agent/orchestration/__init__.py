"""Orchestration: the runs (fix, improve) from entry point to recorded end, the loop and what it keeps between iterations."""
