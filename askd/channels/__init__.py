"""Reaching people away from their tabs: one notification pipeline.

- ``pipeline.py``: the questions the core reports as due, the
  ``only_offline`` decision, handed to the delivery worker as ``Notice``s;
- ``worker.py``: the one delivery worker (claim, attempt, retry, bound, stop)
  for every channel; ``retry.py`` its one backoff; ``once.py`` the one
  place a delivery takes its once key in the store;
- ``channel.py``: what a channel is (``Channel``, ``Notice``, ``Delivery``,
  ``Outcome``); the channels: ``webhook_channel.py`` (body and one POST in
  ``webhook.py``, Slack's mrkdwn in ``mrkdwn.py``) and ``mail_channel.py``
  (the mail and one SMTP attempt in ``mail.py``);
- ``links.py``: answer links; ``sample.py``: ``askd notify test``'s sample;
  ``setup.py``: the channels a daemon's settings ask for.

Nothing is imported here: the settings import ``mail.py`` alone.
"""
