"""Direct TLS for both listeners (``tls.cert_file``, ``tls.key_file``).

The files are read once at start: a missing, unreadable or mismatched pair
stops ``askd serve`` with one line naming the setting (exit 2), never a
daemon that listens in plain HTTP by mistake.
"""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

from askd.config import ConfigError


def _no_passphrase() -> bytes:
    # Without this, OpenSSL would prompt on the terminal for an encrypted key.
    raise ConfigError("invalid setting tls.key_file (ASKD_TLS__KEY_FILE): the key is encrypted; askd needs it unencrypted (mode 0600)")


def server_context(tls: Any) -> ssl.SSLContext | None:
    """The listeners' SSL context, or None when TLS is off."""
    if tls.cert_file is None or tls.key_file is None:
        return None
    for name, path in (("cert_file", tls.cert_file), ("key_file", tls.key_file)):
        if not Path(path).is_file():
            raise ConfigError(f"invalid setting tls.{name} (ASKD_TLS__{name.upper()}): {path} is not a file")
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        ctx.load_cert_chain(tls.cert_file, tls.key_file, password=_no_passphrase)
    except (ssl.SSLError, OSError) as err:
        reason = getattr(err, "reason", None) or err.strerror or str(err)
        raise ConfigError(
            f"invalid setting tls.cert_file/tls.key_file (ASKD_TLS__CERT_FILE, ASKD_TLS__KEY_FILE): "
            f"cannot use {tls.cert_file} with {tls.key_file} ({reason})"
        ) from None
    return ctx
