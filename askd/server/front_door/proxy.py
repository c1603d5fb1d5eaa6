"""Behind a reverse proxy (spec section 13): who the client really is.

Only a peer in ``trusted_proxies`` may tell askd the client's address
(``X-Forwarded-For``, else ``X-Real-IP``) and the original scheme and host
(``X-Forwarded-Proto``, ``X-Forwarded-Host``). Tornado's ``xheaders=True``
would believe those headers from anyone, so askd rewrites the request here
instead, once, before any handler, access log or Origin check sees it.
"""

from __future__ import annotations

import ipaddress
import re
import urllib.parse
from collections.abc import Sequence
from typing import Any

import tornado.web
from tornado.httputil import HTTPServerRequest, split_host_and_port

from askd.client.discovery import connect_host
from askd.config import Settings
from askd.server.front_door.door import HostRule

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address

# A host name, IPv4 address or [IPv6] literal, with an optional port: the only
# X-Forwarded-Host values taken (it ends up in the Origin check).
_HOST = re.compile(r"(?:[A-Za-z0-9._~-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(?::[0-9]{1,5})?")


def public_base(settings: Settings, scheme: str, port: int) -> str:
    """Where people open the inbox: ``public_url``, else the public listener."""
    if settings.public_url is not None:
        return str(settings.public_url)
    return f"{scheme}://{connect_host(settings.host)}:{port}/"


def parse_ip(text: str) -> Address | None:
    """An address as proxies write it: bare, ``1.2.3.4:port`` or ``[v6]:port``.
    IPv4-mapped IPv6 (a dual-stack socket's view of an IPv4 peer) becomes IPv4."""
    text = text.strip()
    if text.startswith("["):
        text = text[1 : text.find("]")] if "]" in text else ""
    elif text.count(":") == 1:
        text = text.split(":", 1)[0]
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def origin_of(url: str) -> str:
    """``https://Host:443/askd/`` -> ``https://host``: the form of an ``Origin`` header."""
    parts = urllib.parse.urlsplit(url)
    scheme, host, port = parts.scheme.lower(), (parts.hostname or "").lower(), parts.port
    if ":" in host:
        host = f"[{host}]"
    default = {"http": 80, "https": 443}.get(scheme)
    return f"{scheme}://{host}" + (f":{port}" if port is not None and port != default else "")


def _trusted(ip: Address, trusted: Sequence[Network]) -> bool:
    return any(ip in net for net in trusted)


def client_address(peer: Address, headers: Any, trusted: Sequence[Network]) -> Address:
    """The client behind ``peer`` (already known to be a trusted proxy).

    ``X-Forwarded-For`` is read right to left, skipping trusted proxies: the
    first other address is the client (entries to its left were written by
    the client itself and prove nothing). A malformed entry stops the walk at
    the last address a trusted proxy vouched for. Without that header,
    ``X-Real-IP``; without either, the peer.
    """
    chain = headers.get("X-Forwarded-For")
    if chain:
        found = peer
        for entry in reversed(chain.split(",")):
            ip = parse_ip(entry)
            if ip is None:
                break
            found = ip
            if not _trusted(ip, trusted):
                break
        return found
    real = headers.get("X-Real-IP")
    return (parse_ip(real) if real else None) or peer


def _last(value: str | None) -> str:
    """The value the nearest proxy wrote: the last of a comma list."""
    return value.rsplit(",", 1)[-1].strip() if value else ""


def apply_forwarded(request: HTTPServerRequest, trusted: Sequence[Network]) -> None:
    """Rewrite ``remote_ip``, ``protocol`` and ``host`` from a trusted peer's headers."""
    peer = parse_ip(request.remote_ip or "")
    if peer is None or not _trusted(peer, trusted):
        return
    request.remote_ip = str(client_address(peer, request.headers, trusted))
    proto = _last(request.headers.get("X-Forwarded-Proto")).lower()
    if proto in ("http", "https"):
        request.protocol = proto
    host = _last(request.headers.get("X-Forwarded-Host"))
    if host and _HOST.fullmatch(host):
        request.host = host
        request.host_name = split_host_and_port(host.lower())[0]  # as Tornado does for Host


class Application(tornado.web.Application):
    """A Tornado application that applies ``trusted_proxies`` to every
    request, then sends one whose host is not this daemon's to
    ``wrong_host`` (a 403)."""

    def __init__(
        self,
        handlers: Any,
        trusted: Sequence[Network] = (),
        hosts: HostRule | None = None,
        wrong_host: tuple[type, dict[str, Any]] | None = None,
        **settings: Any,
    ) -> None:
        super().__init__(handlers, **settings)
        self.trusted = tuple(trusted)
        self.hosts, self.wrong_host = hosts, wrong_host

    def find_handler(self, request: HTTPServerRequest, **kwargs: Any) -> Any:
        if self.trusted:
            apply_forwarded(request, self.trusted)
        if self.hosts is not None and self.wrong_host is not None and not self.hosts.allows(request.host_name):
            return self.get_handler_delegate(request, self.wrong_host[0], self.wrong_host[1])
        return super().find_handler(request, **kwargs)
