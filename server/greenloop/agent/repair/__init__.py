"""Candidate repairs: routes to a fix (function, whole file, install, blocks), sampled and checked by tests."""
