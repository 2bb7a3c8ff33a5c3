"""Candidate repairs: the ladder of rungs (`ladder.py`, `rungs/`), one round of candidates (`candidate_round.py`), judged."""
