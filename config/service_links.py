"""Kubernetes' service links: the variables the kubelet puts into every
container for every Service of its namespace (unless the pod sets
``enableServiceLinks: false``), Docker-links style. For a Service named
``askd`` with cluster IP 10.96.0.12 and the port 8765/TCP named ``http``:

    ASKD_SERVICE_HOST=10.96.0.12
    ASKD_SERVICE_PORT=8765                  the first port
    ASKD_SERVICE_PORT_HTTP=8765             one per named port
    ASKD_PORT=tcp://10.96.0.12:8765         the first port
    ASKD_PORT_8765_TCP=tcp://10.96.0.12:8765
    ASKD_PORT_8765_TCP_PROTO=tcp            these four for every port
    ASKD_PORT_8765_TCP_PORT=8765            (UDP and SCTP alike)
    ASKD_PORT_8765_TCP_ADDR=10.96.0.12

(the Service's name upper-cased, ``-`` as ``_``; an IPv6 address is
bracketed in the URLs). They share askd's prefix, and ``ASKD_PORT`` (or
``ASKD_ADMIN_PORT``, from a Service named ``askd-admin``) is even a
setting's name. askd ignores a variable only when both its name and its
value have these shapes, and only below a ``{NAME}_SERVICE_HOST`` holding
an IP address, the one its URLs and ``_ADDR`` name: a misspelt setting
never has all of that, and is still refused. ``ASKD_PORT=9000`` is the
port setting; ``ASKD_PORT=tcp://10.96.0.12:8765`` next to
``ASKD_SERVICE_HOST=10.96.0.12`` is a link, and leaves ``port`` as the
flags, the TOML file or the default set it.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping

_HOST = "_SERVICE_HOST"
_PORT = r"[1-9][0-9]{0,4}"  # as Go's strconv.Itoa writes 1 to 65535
_PROTOCOLS = "TCP|UDP|SCTP"
_URL = re.compile(rf"(tcp|udp|sctp)://\[?([0-9A-Fa-f.:]+?)\]?:({_PORT})")
# What follows "{NAME}_", and what its value must be.
_SERVICE_PORT = re.compile(r"SERVICE_PORT(?:_[A-Z0-9_]+)?")
_FIRST_PORT = "PORT"
_PORT_VAR = re.compile(rf"PORT_({_PORT})_({_PROTOCOLS})(?:_(PROTO|PORT|ADDR))?")


def _ip(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(value)
    except ValueError:
        return None


def _port(value: str) -> int | None:
    return int(value) if re.fullmatch(_PORT, value) and int(value) <= 65535 else None


def _url(value: str, host: object) -> tuple[str, int] | None:
    """``tcp://HOST:PORT`` naming ``host``: its protocol and port."""
    m = _URL.fullmatch(value)
    if m is None or _ip(m.group(2)) != host or _port(m.group(3)) is None:
        return None
    return m.group(1), int(m.group(3))


def _is_link(rest: str, value: str, host: object) -> bool:
    """``{NAME}_{rest}={value}`` is one of the links of a Service at ``host``."""
    if rest == _HOST[1:]:
        return True  # the anchor itself: its value is the host
    if _SERVICE_PORT.fullmatch(rest):
        return _port(value) is not None
    if rest == _FIRST_PORT:
        return _url(value, host) is not None
    m = _PORT_VAR.fullmatch(rest)
    if m is None:
        return False
    port, protocol, part = m.group(1), m.group(2).lower(), m.group(3)
    if part is None:
        return _url(value, host) == (protocol, int(port))
    if part == "PROTO":
        return value == protocol
    if part == "PORT":
        return value == port
    return _ip(value) == host  # ADDR


def service_links(environ: Mapping[str, str]) -> frozenset[str]:
    """The names in ``environ`` that are Kubernetes service links (exactly
    as the kubelet spells them: upper case)."""
    hosts = {}
    for name, value in environ.items():
        if name.endswith(_HOST) and len(name) > len(_HOST) and (ip := _ip(value)) is not None:
            hosts[name[: -len(_HOST)] + "_"] = ip
    if not hosts:
        return frozenset()
    return frozenset(
        name
        for name, value in environ.items()
        if any(name.startswith(service) and _is_link(name[len(service) :], value, ip) for service, ip in hosts.items())
    )
