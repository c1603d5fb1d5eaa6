"""The floor: a minimal Tornado server doing the same network work as askd
with none of askd's logic, so that askd/floor ratios show what askd adds.

It accepts the same WebSocket upgrades (the user is read from the token's
claims, unverified), keeps each asked body under its session, answers a
``subscribe`` with a ``session_snapshot`` and one stored ``ask_user_questions``
frame per kept body (the same size as askd's), relays an answer to a waiting
``?wait=`` POST, and answers every HTTP call from memory. No auth check, no
validation, no timers, no logging.

    python -m bench.floor --port 0 --admin-port 0
prints one JSON line ``{"event": "listening", "port": P, "admin_port": A, "pid": N}``.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import sys
from typing import Any

import tornado.httpserver
import tornado.netutil
import tornado.web
import tornado.websocket

from bench.payload import QUESTIONS_JSON

# askd.server.app.LISTEN_BACKLOG (not imported: the floor loads none of askd).
LISTEN_BACKLOG = 4096

# Fixed stand-ins of askd's generated values, of the same lengths.
REQUEST_ID = b"f" * 32
STAMP = b"2026-01-01T00:00:00.000Z"

ASK_HEAD = b'{"type":"ask_user_questions","sessionId":"'
ASK_TAIL = (
    b'","payload":{"requestId":"%s","questions":%s,"metadata":{},"createdAt":"%s","expiresAt":"%s"}}'
    % (REQUEST_ID, QUESTIONS_JSON, STAMP, STAMP)
)
PENDING_BODY = b'{"requestId":"%s","sessionId":"%%s","status":"pending","createdAt":"%s","expiresAt":"%s"}' % (REQUEST_ID, STAMP, STAMP)
RESULT_BODY = b'{"requestId":"%s","sessionId":"%%s","status":"answered","answers":%%s}' % REQUEST_ID


class Floor:
    """What the floor remembers: connections by user, bodies by session,
    waiting POSTs by session."""

    def __init__(self) -> None:
        self.conns: dict[str, set[FloorWs]] = {}
        self.bodies: dict[str, list[bytes]] = {}
        self.waiting: dict[str, list[asyncio.Future[bytes]]] = {}
        self.count = 0


def token_sub(header: str) -> str:
    """The ``sub`` claim of a bearer JWT, not verified (the floor trusts all)."""
    part = header.rsplit(" ", 1)[-1].split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))["sub"]


def ask_frame(sid: bytes) -> bytes:
    return ASK_HEAD + sid + ASK_TAIL


class FloorWs(tornado.websocket.WebSocketHandler):
    def initialize(self, floor: Floor) -> None:
        self.floor = floor

    def open(self) -> None:
        self.set_nodelay(True)
        self.user = token_sub(self.request.headers.get("Authorization", ""))
        self.floor.conns.setdefault(self.user, set()).add(self)
        self.floor.count += 1

    def on_close(self) -> None:
        conns = self.floor.conns.get(self.user)
        if conns is not None and self in conns:
            conns.discard(self)
            self.floor.count -= 1

    def on_message(self, message: str | bytes) -> None:
        frame = json.loads(message)
        kind, sid, fid = frame.get("type"), frame.get("sessionId", ""), frame.get("id")
        sid_b = sid.encode()
        if kind == "subscribe":
            kept = self.floor.bodies.get(sid, ())
            self.write_message(b'{"type":"session_snapshot","sessionId":"%s","payload":{"active":%s,"pending":%d}}' % (sid_b, b"true" if kept else b"false", len(kept)), binary=False)
            for _ in kept:
                self.write_message(ask_frame(sid_b), binary=False)
            if fid is not None:
                self.write_message(b'{"type":"ack","id":"%s","sessionId":"%s","payload":{"repushed":%d}}' % (str(fid).encode(), sid_b, len(kept)), binary=False)
        elif kind == "ask_user_questions_result":
            self.write_message(b'{"type":"ack","id":"%s","sessionId":"%s","payload":{"accepted":true}}' % (str(fid).encode(), sid_b), binary=False)
            kept = self.floor.bodies.get(sid)
            if kept:
                kept.pop(0)
            cancelled = b'{"type":"ask_user_questions_cancelled","sessionId":"%s","payload":{"requestId":"%s","reason":"answered"}}' % (sid_b, REQUEST_ID)
            for peer in self.floor.conns.get(self.user, ()):
                peer.write_message(cancelled, binary=False)
            result = RESULT_BODY % (sid_b, json.dumps(frame.get("answers")).encode())
            for fut in self.floor.waiting.pop(sid, ()):
                if not fut.done():
                    fut.set_result(result)
        elif kind == "ping":
            self.write_message(b'{"type":"pong"}', binary=False)


class FloorAsk(tornado.web.RequestHandler):
    def initialize(self, floor: Floor) -> None:
        self.floor = floor

    async def post(self, sid: str) -> None:
        body = self.request.body
        user = json.loads(body)["userId"]
        self.floor.bodies.setdefault(sid, []).append(body)
        sid_b = sid.encode()
        frame = ask_frame(sid_b)
        for peer in self.floor.conns.get(user, ()):
            peer.write_message(frame, binary=False)
        self.set_header("Content-Type", "application/json; charset=utf-8")
        if self.get_query_argument("wait", None):
            fut: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
            self.floor.waiting.setdefault(sid, []).append(fut)
            self.finish(await fut)
            return
        self.set_status(201)
        self.finish(PENDING_BODY % sid_b)


class FloorDisconnect(tornado.web.RequestHandler):
    def initialize(self, floor: Floor) -> None:
        self.floor = floor

    def post(self) -> None:
        n = 0
        for conns in list(self.floor.conns.values()):
            for peer in list(conns):
                if peer.ws_connection is not None and peer.ws_connection.stream is not None:  # type: ignore[attr-defined]
                    peer.ws_connection.stream.close()  # type: ignore[attr-defined]
                    n += 1
        self.finish({"disconnected": n})


class FloorStats(tornado.web.RequestHandler):
    def initialize(self, floor: Floor) -> None:
        self.floor = floor

    def get(self) -> None:
        self.finish({"connections": self.floor.count, "pending": sum(len(b) for b in self.floor.bodies.values())})


def _listen(app: tornado.web.Application, port: int, backlog: int) -> int:
    sockets = tornado.netutil.bind_sockets(port, "127.0.0.1", backlog=backlog)
    tornado.httpserver.HTTPServer(app).add_sockets(sockets)
    return sockets[0].getsockname()[1]


async def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.floor")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--admin-port", type=int, default=0)
    ap.add_argument("--backlog", type=int, default=LISTEN_BACKLOG, help="listen backlog (askd's)")
    args = ap.parse_args(argv)
    floor = Floor()
    kw = {"floor": floor}
    public = tornado.web.Application([(r"/ws", FloorWs, kw), (r"/v1/sessions/([^/]+)/questions", FloorAsk, kw)])
    admin = tornado.web.Application([(r"/admin/v1/disconnect", FloorDisconnect, kw), (r"/admin/v1/stats", FloorStats, kw)])
    port = _listen(public, args.port, args.backlog)
    admin_port = _listen(admin, args.admin_port, args.backlog)
    print(json.dumps({"event": "listening", "port": port, "admin_port": admin_port, "pid": os.getpid()}), file=sys.stderr, flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    if "--uvloop" in sys.argv:
        import uvloop

        sys.argv.remove("--uvloop")
        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
