"""The project's own environment, set up before the rounds: versions from the project, its diagnosis, its remedies."""
