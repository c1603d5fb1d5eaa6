"""The state directory: the generated secret and ``askd.json``, the file that
tells the CLI on the same machine where the daemon listens."""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import Any

SECRET_FILE = "secret"
RUNTIME_FILE = "askd.json"


def ensure_dir(state_dir: Path) -> Path:
    state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    return state_dir


def read_secret(state_dir: Path) -> str | None:
    try:
        return (state_dir / SECRET_FILE).read_text().strip() or None
    except FileNotFoundError:
        return None


def load_or_create_secret(state_dir: Path) -> str:
    """The secret in the state directory, generated (mode 0600) on first use."""
    existing = read_secret(state_dir)
    if existing:
        return existing
    ensure_dir(state_dir)
    value = secrets.token_urlsafe(48)
    path = state_dir / SECRET_FILE
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process won the race; use its secret
        return read_secret(state_dir) or value
    with os.fdopen(fd, "w") as f:
        f.write(value + "\n")
    return value


def write_runtime(state_dir: Path, info: dict[str, Any]) -> Path:
    ensure_dir(state_dir)
    path = state_dir / RUNTIME_FILE
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(info, indent=2) + "\n")
    os.replace(tmp, path)  # readers never see half a file
    return path


def read_runtime(state_dir: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((state_dir / RUNTIME_FILE).read_text())
    except (FileNotFoundError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def remove_runtime(state_dir: Path, pid: int) -> None:
    """Remove askd.json if it is still ours (a newer daemon may have replaced it)."""
    info = read_runtime(state_dir)
    if info is not None and info.get("pid") == pid:
        (state_dir / RUNTIME_FILE).unlink(missing_ok=True)
