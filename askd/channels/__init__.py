"""Reaching people away from their tabs: one notification pipeline.

- ``pipeline.py``: the questions the core reports as due, the
  ``only_offline`` decision, handed to the delivery worker as ``Notice``s;
- ``worker.py``: the one delivery worker (claim, attempt, retry, bound, stop)
  for every channel; ``retry.py`` its one backoff; ``once.py`` the one
  place a delivery takes its once key in the store;
- ``channel.py``: what a channel is (``Channel``, ``Notice``, ``Delivery``,
  ``Outcome``); ``event.py``: what a notice says as JSON, which every
  channel's message is built from;
- a folder per channel, each with its channel, its API and its messages:
  ``webhook/`` (``channel.py``; ``request.py`` the body in its format, its
  signature and one POST), ``mail/`` (``channel.py``; ``message.py`` what
  a mail says; ``smtp.py`` the server's URL and one attempt), ``slack/``
  (``app.py`` the Slack app; ``api.py`` one Web API call; ``message.py``
  Block Kit; ``mrkdwn.py`` question Markdown as mrkdwn) and ``teams/``
  (``card.py`` the Adaptive Card, sent by a ``teams`` webhook);
- ``links.py``: answer links; ``sample.py``: ``askd notify test``'s sample;
  ``setup.py``: the channels a daemon's settings ask for.

Nothing is imported here: the settings import ``mail/smtp.py`` alone.
"""
