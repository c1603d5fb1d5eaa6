"""``askd schema``: print the JSON Schema of askd's frames, bodies and results."""

from __future__ import annotations

import json

import typer

from askd.protocol.schema import protocol_schema


def schema() -> None:
    """Print the JSON Schema of the WebSocket frames and the agent API's bodies and results."""
    # Indented with sorted keys: people read it, and the JS types are made
    # from it, so the same models must give the same bytes.
    typer.echo(json.dumps(protocol_schema(), indent=2, sort_keys=True))
