"""The repair ladder's rungs, one module each; their order is `repair/ladder.py`."""
