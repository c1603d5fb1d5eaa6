"""The chaos soak (``python -m tests.system.soak --seconds N``); see ``chaos.py``."""
