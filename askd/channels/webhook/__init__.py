"""Webhooks: the channel (``channel.py``) and one request: its body in
its format, its signature and one POST (``request.py``)."""
