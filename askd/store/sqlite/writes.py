"""Each change the core decides, as the SQLite store writes it: checked
against the status the file holds, in the commit's one transaction."""

from __future__ import annotations

import sqlite3

from askd.core.changes import Approved, Asked, AwayEnded, AwaySet, Change, Ended, Escalated, Extended, Forgot, GroupDeleted, GroupSet, Notified
from askd.core.registry.rules import UnknownChange
from askd.protocol import codec
from askd.store.rows import steps_to_json


def write(db: sqlite3.Connection, change: Change) -> bool:
    """Write one change; whether it took effect (``parts.ChangeLog.commit``)."""
    if isinstance(change, Asked):
        req, parent = change.request, change.parent_session_id
        assert req.frame is not None
        # A request id kept already does not take effect (as on every store),
        # quietly: a constraint error would fail the whole batch. Its row
        # first, so its sessions are written only when it takes.
        cur = db.execute(
            "INSERT INTO requests (request_id, session_id, user_id, created_at, expires_at,"
            " idempotency_key, frame, status, agent, max_extension, on_timeout, escalate, approval, remind_every, remind_times,"
            " host_key) VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (request_id) DO NOTHING",
            (
                req.request_id,
                req.session_id,
                req.user_id,
                req.created_at,
                req.expires_at,
                req.idempotency_key,
                req.frame,
                req.agent,
                req.max_extension,
                None if req.on_timeout is None else codec.dumps(req.on_timeout),
                steps_to_json(req.escalate),
                None if req.approval is None else req.approval.to_json(),
                *(req.remind or (None, None)),
                req.host_key_hash,
            ),
        )
        if cur.rowcount != 1:
            return False
        # The session before its parent, as the registry makes them: rowid
        # order is the order a restart restores, lists and re-pushes them in.
        # A session the registry knew with this parent is stored as it is
        # (one statement less per ask); the WHERE leaves a known session's
        # row alone unless it gains its parent: rewriting it unchanged cost
        # a page in the WAL per ask.
        if not change.session_known:
            # A new session (or a parent it names) is the asking agent's.
            db.execute(
                "INSERT INTO sessions (session_id, owner, parent_session_id, agent) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (session_id) DO UPDATE SET parent_session_id = excluded.parent_session_id"
                " WHERE parent_session_id IS NULL AND excluded.parent_session_id IS NOT NULL",
                (req.session_id, req.user_id, parent, req.agent),
            )
            if parent is not None:
                db.execute(
                    "INSERT OR IGNORE INTO sessions (session_id, owner, parent_session_id, agent) VALUES (?, ?, NULL, ?)",
                    (parent, req.user_id, req.agent),
                )
        return True
    if isinstance(change, Ended):
        if change.counted is not None:  # an action's last approval: against its count, as Approved
            assert change.approval is not None
            cur = db.execute(
                "UPDATE requests SET status = ?, ended_at = ?, frame = NULL, answered_by = ?, via = ?, digest = ?,"
                " approval = ?, approvals = approvals + 1, on_behalf_of = ? WHERE request_id = ? AND status = 'pending'"
                " AND approvals = ?",
                (
                    change.status.value, change.ended_at, change.answered_by, change.via, change.digest,
                    change.approval.to_json(), change.on_behalf_of, change.request_id, change.counted,
                ),
            )
            return cur.rowcount == 1
        cur = db.execute(
            "UPDATE requests SET status = ?, answers = ?, error = ?, ended_at = ?, frame = NULL, on_timeout = NULL,"
            " answered_by = ?, via = ?, reason = ?, defaulted = ?, digest = ?, on_behalf_of = ?"
            " WHERE request_id = ? AND status = 'pending'",
            (
                change.status.value,
                None if change.answers is None else codec.dumps(change.answers),  # lone surrogates escaped
                change.error,
                change.ended_at,
                change.answered_by,
                change.via,
                change.reason,
                int(change.defaulted),
                change.digest,
                change.on_behalf_of,
                change.request_id,
            ),
        )
        return cur.rowcount == 1
    if isinstance(change, Approved):
        # Compare and set: only against the count of approvals it was decided with.
        cur = db.execute(
            "UPDATE requests SET approval = ?, approvals = approvals + 1"
            " WHERE request_id = ? AND status = 'pending' AND approvals = ?",
            (change.approval.to_json(), change.request_id, change.counted),
        )
        return cur.rowcount == 1
    if isinstance(change, Extended):
        # Compare and set: only from the deadline it was decided against.
        cur = db.execute(
            "UPDATE requests SET expires_at = ?, extended = ?, frame = ?"
            " WHERE request_id = ? AND status = 'pending' AND expires_at = ?",
            (change.expires_at, change.extended, change.frame, change.request_id, change.previous),
        )
        return cur.rowcount == 1
    if isinstance(change, Escalated):
        cur = db.execute(
            "UPDATE requests SET escalations = ? WHERE request_id = ? AND status = 'pending' AND escalations < ?",
            (change.step, change.request_id, change.step),
        )
        return cur.rowcount == 1
    if isinstance(change, GroupSet):
        db.execute(
            "INSERT INTO groups VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET members = excluded.members",
            (change.group, _text(change.members)),
        )
        return True
    if isinstance(change, GroupDeleted):
        return db.execute("DELETE FROM groups WHERE name = ?", (change.group,)).rowcount == 1
    if isinstance(change, AwaySet):  # an away (protocol section 20): the last stored wins, as a group's
        db.execute(
            "INSERT INTO aways VALUES (?, ?, ?) ON CONFLICT (user_id) DO UPDATE SET until = excluded.until,"
            " delegates = excluded.delegates",
            (change.user, change.until, _text(change.delegates)),
        )
        return True
    if isinstance(change, AwayEnded):  # only an away held; its deadline's only at its until
        if change.until is None:
            return db.execute("DELETE FROM aways WHERE user_id = ?", (change.user,)).rowcount == 1
        return db.execute("DELETE FROM aways WHERE user_id = ? AND until = ?", (change.user, change.until)).rowcount == 1
    if isinstance(change, Notified):
        cur = db.execute(
            "UPDATE requests SET notified = 1 WHERE request_id = ? AND status = 'pending'", (change.request_id,)
        )
        return cur.rowcount == 1
    if not isinstance(change, Forgot):
        # A kind the rules know and this file does not: never a silent no-op.
        raise UnknownChange(f"the SQLite store has no write for a change of kind {type(change).__name__}")
    cur = db.execute("DELETE FROM requests WHERE request_id = ? AND status != 'pending'", (change.request_id,))
    if cur.rowcount != 1:
        return False
    collect(db, change.session_id)
    return True


def _text(value: object) -> str:
    """A list kept in a TEXT column: the codec's JSON as text (bytes would
    be kept as a BLOB). Rows written before with ``json.dumps``'s spaced,
    ASCII-escaped form read the same (tests/store/test_stored_json.py)."""
    return codec.dumps(value).decode()


def collect(db: sqlite3.Connection, session_id: str | None) -> None:
    """Forget sessions that hold nothing, walking up to their parents, as
    the registry does."""
    while session_id is not None:
        holds = db.execute(
            "SELECT EXISTS (SELECT 1 FROM requests WHERE session_id = ?1)"
            " OR EXISTS (SELECT 1 FROM sessions WHERE parent_session_id = ?1)",
            (session_id,),
        ).fetchone()[0]
        if holds:
            return
        row = db.execute(
            "DELETE FROM sessions WHERE session_id = ? RETURNING parent_session_id", (session_id,)
        ).fetchone()
        session_id = row[0] if row else None

