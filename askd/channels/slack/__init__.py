"""The Slack app (``app.py``), one call of Slack's Web API (``api.py``),
Slack's messages in Block Kit (``message.py``) and question Markdown as
mrkdwn (``mrkdwn.py``)."""
