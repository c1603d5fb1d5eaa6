"""The chaos soak (``python -m tests.soak --seconds N``); see ``chaos.py``."""
