"""Applying changes: the working copy of the workspace, and the one path by which a plan's edits, writes and installs reach it."""
