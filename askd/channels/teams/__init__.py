"""Microsoft Teams: the Adaptive Card a ``teams`` webhook posts (``card.py``)."""
