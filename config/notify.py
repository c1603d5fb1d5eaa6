"""``[notify]``: webhooks, e-mail (the mail server, its TLS rule and the
From address) and a Slack app for people away from every tab."""

from __future__ import annotations

from typing import Literal

from pydantic import AnyHttpUrl, Field, SecretStr, ValidationInfo, field_validator

from askd.addresses import Sender
from askd.channels.mail.smtp import SmtpTarget, smtp_target
from askd.config.section import Section


class NotifySettings(Section):
    """Webhooks and e-mail for people away from every tab (protocol section 12)."""

    webhook_url: AnyHttpUrl | None = Field(default=None, description="URL each new question is POSTed to; unset: no webhooks.")
    format: Literal["json", "slack", "teams"] = Field(
        "json",
        description=(
            "Body: json (askd's event), slack (a Block Kit message with answer buttons, for chat incoming webhooks), "
            "or teams (a message with an Adaptive Card and answer buttons, for a Teams Workflows webhook)."
        ),
    )
    webhook_secret: SecretStr | None = Field(
        default=None, description="Signs each delivery per Standard Webhooks (webhook-signature over its id, timestamp and body; whsec_ + base64 of it); unset: no signature."
    )
    after_seconds: float = Field(0.0, ge=0, description="Send only if the question is still pending this many seconds after its creation.")
    only_offline: bool = Field(False, description="Send only if the user has no open connection at that moment.")
    remind_every_seconds: float | None = Field(
        None, description="Remind those with no open tab every this many seconds (at least 60) while a question waits, unless the ask says; unset or 0: no reminders."
    )
    remind_times: int = Field(1, ge=1, le=10, description="How many reminders at most (1 to 10), with remind_every_seconds.")
    timeout_seconds: float = Field(
        10.0, gt=0, le=300, description="How long one delivery attempt (a webhook POST, or one mail) may take before it counts as failed."
    )
    # A secret: the URL may hold the mail server's password, so it is never
    # shown (repr, logs, askd notify test print askd.channels.mail.smtp.SmtpTarget.shown).
    smtp_url: SecretStr | None = Field(
        default=None,
        description=(
            "Mail server for e-mail notifications: smtp://[USER:PASSWORD@]HOST[:PORT] (STARTTLS when the server "
            "offers it; required with a password) or smtps://... (TLS from the start); unset: no e-mail."
        ),
    )
    smtp_login_without_tls: bool = Field(
        False,
        description=(
            "Send smtp_url's user and password even to a server that offers no STARTTLS (in plain text: "
            "only on a network you trust). Off: such a mail fails."
        ),
    )
    email_from: Sender | None = Field(
        default=None,
        validate_default=True,  # checked unset too: smtp_url needs it
        description="The From of askd's mails, e.g. \"askd <askd@example.com>\"; needed with smtp_url.",
    )

    # A secret: never shown (repr, logs); askd.channels.slack_channel logs
    # only whether it is set.
    slack_bot_token: SecretStr | None = Field(
        default=None,
        description=(
            "A Slack app's bot token (xoxb-...; scopes chat:write and im:write): askd posts each question with "
            "chat.postMessage and edits it when the question ends; unset: no Slack app."
        ),
    )
    slack_channel: str | None = Field(
        default=None,
        min_length=1,
        validate_default=True,  # checked unset too: it needs the token
        description="The Slack channel id (C...) askd posts each question in (the bot invited there); unset: direct messages only.",
    )
    slack_api_url: AnyHttpUrl = Field(
        default="https://slack.com/api/",
        validate_default=True,
        description="Slack's Web API base URL (tests point it at a local fake).",
    )

    @field_validator("slack_bot_token")
    @classmethod
    def _a_token(cls, v: SecretStr | None) -> SecretStr | None:
        if v is not None and (not v.get_secret_value().strip() or any(c.isspace() for c in v.get_secret_value())):
            raise ValueError("must be a bot token such as xoxb-... (not empty, no spaces; leave it unset for no Slack app)")
        return v

    @field_validator("remind_every_seconds")
    @classmethod
    def _remind_every(cls, v: float | None) -> float | None:
        if v is not None and v != 0 and not v >= 60:
            raise ValueError("must be at least 60 (seconds), or 0 or unset for no reminders")
        return v or None

    def remind(self) -> tuple[float, int] | None:
        """The default reminders of an ask that names none (None: none)."""
        return None if self.remind_every_seconds is None else (self.remind_every_seconds, self.remind_times)

    @field_validator("webhook_secret")
    @classmethod
    def _not_empty(cls, v: SecretStr | None) -> SecretStr | None:
        if v is not None and not v.get_secret_value():
            raise ValueError("must not be empty (leave it unset for no signature)")
        return v

    @field_validator("smtp_url")
    @classmethod
    def _an_smtp_url(cls, v: SecretStr | None) -> SecretStr | None:
        if v is not None:
            smtp_target(v.get_secret_value())  # ValueError, naming no password
        return v

    @field_validator("slack_channel")
    @classmethod
    def _channel_with_token(cls, v: str | None, info: ValidationInfo) -> str | None:
        if v is not None and info.data.get("slack_bot_token") is None:
            raise ValueError("is set but notify.slack_bot_token (ASKD_NOTIFY__SLACK_BOT_TOKEN) is not: posting needs the app's token")
        if v is not None and (v != v.strip() or any(c.isspace() for c in v)):
            raise ValueError("must be a channel id such as C0123456789 (no spaces)")
        return v

    def mail_server(self) -> SmtpTarget | None:
        """The mail server of ``smtp_url`` with its TLS rule; None: no e-mail."""
        if self.smtp_url is None:
            return None
        return smtp_target(self.smtp_url.get_secret_value(), login_without_tls=self.smtp_login_without_tls)

    @field_validator("email_from")
    @classmethod
    def _from_with_smtp(cls, v: Sender | None, info: ValidationInfo) -> Sender | None:
        if v is None and info.data.get("smtp_url") is not None:
            raise ValueError("is not set but notify.smtp_url (ASKD_NOTIFY__SMTP_URL) is: a mail needs a From address")
        return v
