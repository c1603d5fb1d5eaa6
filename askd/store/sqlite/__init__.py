"""``store = "sqlite"``: an embedded SQLite database, the default
(``store.py`` says how; its parts are the modules beside it)."""

from askd.store.sqlite.database import Database
from askd.store.sqlite.store import SqliteStore
from askd.store.sqlite.schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION

__all__ = ["APPLICATION_ID", "MIGRATIONS", "SCHEMA_VERSION", "Database", "SqliteStore"]
