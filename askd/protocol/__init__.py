"""askd's wire: everything a peer of the daemon reads or writes, defined once.

- ``ids``: what names a session, a question, a frame (and ``*``, subscribe's wildcard);
- ``status``: a question's status, how it was answered (``via``), why it ended;
- ``codec``: JSON in and out (orjson, bounded);
- ``visible``: the characters a person cannot see (bidirectional, zero-width): refused in names, marked where shown;
- ``models``: what peers send the daemon (asks, answers, bodies), validated with pydantic;
- ``frames``: what a tab sends on ``/ws``, parsed in the spec's order;
- ``results``: what the agent API answers (a question's result, a listing, an error);
- ``events``: what the daemon sends on ``/ws``;
- ``schema``: all of it as one JSON Schema (``askd schema``, the JavaScript client's types).

What the daemon sends (``results``, ``events``) is ``TypedDict``\\ s: the core
builds plain dicts of those shapes (no cost on the hot path), ``schema``
describes them with pydantic, and ``askd.client`` parses them with a cached
``TypeAdapter`` (``adapter``). Nothing here imports the engine
(``askd.core``), the daemon (``askd.server``) or its settings
(``askd.config``): the client loads this package and nothing of those.
"""
