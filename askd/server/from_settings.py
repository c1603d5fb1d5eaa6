"""What the daemon derives from its settings before it starts: the core's
limits and notification policy, and the one line ``askd serve`` prints for
a person at a terminal."""

from __future__ import annotations

import os
import shutil
import sys

from askd.config import Settings
from askd.core import Limits, NotifyPolicy
from askd.server.front_door.proxy import public_base


def limits_from(settings: Settings) -> Limits:
    return Limits(
        question_timeout=settings.question_timeout_seconds,
        max_timeout=settings.max_timeout_seconds,
        result_ttl=settings.result_ttl_seconds,
        max_pending_per_session=settings.limits.max_pending_per_session,
        max_pending_total=settings.limits.max_pending_total,
        max_pending_bytes_per_user=settings.limits.max_pending_bytes_per_user,
        max_pending_per_agent=settings.limits.max_pending_per_agent,
        max_pending_bytes_per_agent=settings.limits.max_pending_bytes_per_agent,
        max_user_share_per_agent=settings.limits.max_user_share_per_agent,
        max_pending_bytes_total=settings.limits.max_pending_bytes_total,
    )


def notify_policy(settings: Settings) -> NotifyPolicy | None:
    """When questions are due for notifications: with a webhook, e-mail or a Slack app."""
    n = settings.notify
    if n.webhook_url is None and n.smtp_url is None and n.slack_bot_token is None:
        return None
    return NotifyPolicy(n.after_seconds, n.only_offline)


def next_steps(settings: Settings, scheme: str, port: int) -> str:
    """The one line a person who just ran ``askd serve`` needs: how to open
    an inbox and where agents ask."""
    default_dir = type(settings).model_fields["state_dir"].get_default(call_default_factory=True)
    here = "" if settings.state_dir == default_dir else f"ASKD_STATE_DIR={settings.state_dir} "
    agents = public_base(settings, scheme, port).rstrip("/") + "/v1/sessions/SESSION/questions"
    return f"Next: `{here}{_askd_command()} open --user YOU` opens the inbox of user YOU; agents ask with POST {agents}"


def _askd_command() -> str:
    """``askd``, or the path this one was started by when ``askd`` on the
    PATH is another or none (``make serve`` runs ``.venv/bin/askd``)."""
    started = sys.argv[0]
    if os.path.basename(started) != "askd" or shutil.which("askd") == os.path.abspath(started):
        return "askd"
    return started
