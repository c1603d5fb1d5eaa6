"""The SQLite store's schema: every migration since the first, in order.

The schema version is ``PRAGMA user_version``; a file with a newer one is
refused, an older one is migrated at start (one transaction per step).
"""

from __future__ import annotations

#: ``PRAGMA application_id``: marks the file as askd's ("askd" in ASCII).
APPLICATION_ID = 0x61736B64

# The users an audit record adds to its question's audience (askd.audit.history.joined).
_JOINED = "CASE json_extract(a.record, '$.event') WHEN 'asked' THEN '$.data.audience' ELSE '$.data.added' END"

#: Schema migrations: the statements that take a database from version N-1
#: to N. The schema version is ``PRAGMA user_version``.
MIGRATIONS: list[list[str]] = [
    [  # 1: sessions (their tree), pending questions and kept results
        """CREATE TABLE sessions (
            session_id        TEXT PRIMARY KEY,
            owner             TEXT NOT NULL,
            parent_session_id TEXT
        )""",
        "CREATE INDEX sessions_by_parent ON sessions (parent_session_id)",
        """CREATE TABLE requests (
            request_id        TEXT PRIMARY KEY,
            session_id        TEXT NOT NULL,
            user_id           TEXT NOT NULL,
            created_at        REAL NOT NULL,
            expires_at        REAL NOT NULL,
            idempotency_key   TEXT,
            frame             BLOB,    -- the ask_user_questions frame, while pending
            status            TEXT NOT NULL,
            answers           BLOB,    -- UTF-8 JSON, once answered
            error             TEXT,
            ended_at          REAL,
            notified          INTEGER NOT NULL DEFAULT 0  -- a webhook delivery succeeded
        )""",
        "CREATE INDEX requests_by_session ON requests (session_id)",
        # The probe's scratch row: while the store fails, askd writes one
        # question's worth here (and deletes it) to learn it takes writes again.
        "CREATE TABLE probe (x BLOB)",
    ],
    [  # 2: daemon-wide values set at run time: the revocation instant (auth.not_before)
        "CREATE TABLE settings (name TEXT PRIMARY KEY, value REAL NOT NULL)",
    ],
    [  # 3: agents kept apart: the sub of the agent token that first asked in a
        # session, and of the one that asked each question (its
        # Idempotency-Key is that agent's); NULL: a token without a sub
        "ALTER TABLE sessions ADD COLUMN agent TEXT",
        "ALTER TABLE requests ADD COLUMN agent TEXT",
    ],
    [  # 4: more time, a safe default, declining, and who answered how
        "ALTER TABLE requests ADD COLUMN max_extension REAL NOT NULL DEFAULT 0",  # the person's allowance
        "ALTER TABLE requests ADD COLUMN extended REAL NOT NULL DEFAULT 0",  # of which used
        "ALTER TABLE requests ADD COLUMN on_timeout BLOB",  # UTF-8 JSON answers, while pending
        "ALTER TABLE requests ADD COLUMN answered_by TEXT",
        "ALTER TABLE requests ADD COLUMN via TEXT",
        "ALTER TABLE requests ADD COLUMN reason TEXT",  # a decline's
        "ALTER TABLE requests ADD COLUMN defaulted INTEGER NOT NULL DEFAULT 0",
    ],
    [  # 5: groups, named sets of user ids a question may be asked of, and escalation steps
        "CREATE TABLE groups (name TEXT PRIMARY KEY, members TEXT NOT NULL)",  # members: a JSON list
        "ALTER TABLE requests ADD COLUMN escalate TEXT",  # JSON [[afterSeconds, [entries]], ...], or NULL
        "ALTER TABLE requests ADD COLUMN escalations INTEGER NOT NULL DEFAULT 0",  # steps taken
    ],
    [  # 6: e-mail: users' addresses, and each mail claimed (question, escalation step, recipient)
        "CREATE TABLE users (user_id TEXT PRIMARY KEY, email TEXT NOT NULL)",
        """CREATE TABLE mail_claims (
            request_id TEXT NOT NULL,
            step       INTEGER NOT NULL,
            user_id    TEXT NOT NULL,
            PRIMARY KEY (request_id, step, user_id)
        ) WITHOUT ROWID""",
    ],
    [  # 7: once-only claims (an `askd open` code's use), each kept until the credential is dead
        "CREATE TABLE once_claims (key TEXT PRIMARY KEY, expires_at REAL NOT NULL) WITHOUT ROWID",
    ],
    [  # 8: receipts: an ended question's digest, taken before its questions are dropped
        "ALTER TABLE requests ADD COLUMN digest TEXT",
    ],
    [  # 9: one table of once keys, named claims (store.once_keys: notify:, mail:, open: keys), each
        # kept until its instant; one table of per-user settings (store.directory)
        "CREATE TABLE claims (key TEXT PRIMARY KEY, until REAL NOT NULL) WITHOUT ROWID",
        "CREATE INDEX claims_by_until ON claims (until)",
        "INSERT INTO claims SELECT key, expires_at FROM once_claims",
        # a mail's claim is kept while its question could be pending (channels.channel.OnceKey.of)
        "INSERT OR IGNORE INTO claims SELECT 'mail:' || c.request_id || ':' || c.step || ':' || c.user_id,"
        " r.expires_at + r.max_extension + 60 FROM mail_claims c JOIN requests r USING (request_id)",
        "DROP TABLE once_claims",
        "DROP TABLE mail_claims",
        """CREATE TABLE user_settings (
            user_id TEXT NOT NULL,
            name    TEXT NOT NULL,  -- parts.SETTINGS: email, ...
            value   TEXT NOT NULL,
            PRIMARY KEY (user_id, name)
        ) WITHOUT ROWID""",
        "INSERT INTO user_settings SELECT user_id, 'email', email FROM users",
        "DROP TABLE users",
    ],
    [  # 10: approvals (protocol section 17): an action's record (JSON: its quorum,
        # the approvals given, once approved the final arguments and scope) and
        # the count of approvals, which an approval's write compares
        "ALTER TABLE requests ADD COLUMN approval BLOB",
        "ALTER TABLE requests ADD COLUMN approvals INTEGER NOT NULL DEFAULT 0",
    ],
    [  # 11: the audit trail (protocol section 19): each record as its JSON, by
        # seq, written in the transaction of the change it records; the
        # chain's head apart, so pruning every record keeps the chain going
        """CREATE TABLE audit (
            seq        INTEGER PRIMARY KEY,
            at         TEXT NOT NULL,  -- RFC 3339 UTC, as the record says
            session_id TEXT NOT NULL,
            request_id TEXT NOT NULL,
            record     TEXT NOT NULL
        )""",
        "CREATE INDEX audit_by_at ON audit (at)",
        "CREATE TABLE audit_head (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL, hash TEXT NOT NULL, at TEXT)",
    ],
    [  # 12: the history index (GET /v1/me/history): each user's ends by seq,
        # written with the records; a question's records found by its id (its
        # audience, at its end). Filled from the records already kept.
        "CREATE INDEX audit_by_request ON audit (request_id)",
        """CREATE TABLE audit_history (
            user_id TEXT NOT NULL,
            seq     INTEGER NOT NULL,  -- an end's record
            PRIMARY KEY (user_id, seq)
        ) WITHOUT ROWID""",
        """INSERT OR IGNORE INTO audit_history (user_id, seq)
        SELECT u.value, e.seq FROM audit AS e
        JOIN audit AS a ON a.request_id = e.request_id AND a.session_id = e.session_id AND a.seq < e.seq
        JOIN json_each(a.record, CASE json_extract(a.record, '$.event') WHEN 'asked' THEN '$.data.audience' ELSE '$.data.added' END) AS u
        WHERE json_extract(e.record, '$.event') IN ('answered', 'declined', 'timeout', 'cancelled', 'withdrawn')
        AND json_extract(a.record, '$.event') IN ('asked', 'escalated')""",
    ],
    [  # 13: away, with delegates (protocol section 20): each away user's end and delegates
        # (a JSON list), and the away user a delegate answered for
        "CREATE TABLE aways (user_id TEXT PRIMARY KEY, until REAL NOT NULL, delegates TEXT NOT NULL)",
        "ALTER TABLE requests ADD COLUMN on_behalf_of TEXT",
    ],
    [  # 14: chat messages posted about a question (store.posts: Slack's channel
        # and ts), kept so that its end edits them, after a restart too
        """CREATE TABLE posts (
            request_id TEXT NOT NULL,
            key        TEXT NOT NULL,  -- the message within the question (step, recipient)
            session_id TEXT NOT NULL,
            channel    TEXT NOT NULL,
            ts         TEXT NOT NULL,
            body       TEXT NOT NULL,  -- the channel's own: what the edit starts from
            until      REAL NOT NULL,
            PRIMARY KEY (request_id, key)
        ) WITHOUT ROWID""",
        "CREATE INDEX posts_by_until ON posts (until)",
    ],
    [  # 15: the history's titles (GET /v1/me/history's header), never in the
        # hash-chained records: a pending question's, taken when it is asked,
        # then each end's on its users' rows (capped and pruned with them).
        # Ends indexed before this step have none (NULL).
        """CREATE TABLE audit_titles (
            request_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            title      TEXT NOT NULL,
            PRIMARY KEY (request_id, session_id)
        ) WITHOUT ROWID""",
        "ALTER TABLE audit_history ADD COLUMN title TEXT",
    ],
    [  # 16: reminders (askd.core.reminders): every so many seconds, so many times; NULL: none
        "ALTER TABLE requests ADD COLUMN remind_every REAL",
        "ALTER TABLE requests ADD COLUMN remind_times INTEGER",
    ],
    [  # 17: each pending question's audience kept with its title (a JSON list;
        # title '' when it has none), so that its end reads one row, not its
        # records; then the two indexes on audit that only served that read
        # and the retention's, which scans: two pages less per commit
        # (docs/performance.md). Pending questions' rows filled from their records.
        "ALTER TABLE audit_titles ADD COLUMN users TEXT",
        f"""UPDATE audit_titles SET users = (
            SELECT json_group_array(u.value) FROM audit AS a, json_each(a.record, {_JOINED}) AS u
            WHERE a.request_id = audit_titles.request_id AND a.session_id = audit_titles.session_id
            AND json_extract(a.record, '$.event') IN ('asked', 'escalated'))""",
        f"""INSERT OR IGNORE INTO audit_titles (request_id, session_id, title, users)
        SELECT a.request_id, a.session_id, '', json_group_array(u.value)
        FROM audit AS a JOIN requests AS r ON r.request_id = a.request_id AND r.session_id = a.session_id AND r.status = 'pending',
        json_each(a.record, {_JOINED}) AS u
        WHERE json_extract(a.record, '$.event') IN ('asked', 'escalated')
        GROUP BY a.request_id, a.session_id""",
        "DROP INDEX audit_by_request",
        "DROP INDEX audit_by_at",
    ],
    [  # 18: the SHA-256 (hex) of an ask's hostKey (protocol section 5): only the
        # asking process's own host may relay the person's answer; NULL: no agent may
        "ALTER TABLE requests ADD COLUMN host_key TEXT",
    ],
]
SCHEMA_VERSION = len(MIGRATIONS)
