"""Which forwarded headers askd believes, and from whom (spec section 13),
on requests built in memory: every rule of ``askd.server.front_door.proxy``."""

from __future__ import annotations

import ipaddress
from types import SimpleNamespace

import pytest
from tornado.httputil import HTTPHeaders, HTTPServerRequest, RequestStartLine

from askd.server.front_door.proxy import apply_forwarded, origin_of, parse_ip

TRUSTED = [ipaddress.ip_network("127.0.0.1"), ipaddress.ip_network("10.0.0.0/8")]


def request(peer: str, *headers: tuple[str, str], host: str = "askd.internal:8765") -> HTTPServerRequest:
    h = HTTPHeaders({"Host": host})
    for name, value in headers:
        h.add(name, value)  # a repeated header stays repeated, as on the wire
    conn = SimpleNamespace(context=SimpleNamespace(remote_ip=peer, protocol="http"))
    return HTTPServerRequest(start_line=RequestStartLine("GET", "/ws", "HTTP/1.1"), headers=h, connection=conn)


def client(peer: str, *headers: tuple[str, str]) -> str:
    r = request(peer, *headers)
    apply_forwarded(r, TRUSTED)
    return r.remote_ip


@pytest.mark.parametrize(
    ("peer", "headers", "expected"),
    [
        pytest.param("127.0.0.1", [("X-Forwarded-For", "203.0.113.7")], "203.0.113.7", id="one-hop"),
        pytest.param("127.0.0.1", [("X-Forwarded-For", "198.51.100.1, 203.0.113.7, 10.1.2.3")], "203.0.113.7", id="trusted-hops-skipped"),
        pytest.param("127.0.0.1", [("X-Forwarded-For", "10.0.0.9, 10.1.2.3")], "10.0.0.9", id="all-trusted-leftmost"),
        pytest.param("127.0.0.1", [("X-Forwarded-For", "1.1.1.1"), ("X-Forwarded-For", "203.0.113.7")], "203.0.113.7", id="repeated-header"),
        pytest.param("127.0.0.1", [("X-Forwarded-For", "203.0.113.7, unknown")], "127.0.0.1", id="malformed-last-is-the-peer"),
        pytest.param("127.0.0.1", [("X-Forwarded-For", "garbage, 10.1.2.3")], "10.1.2.3", id="malformed-stops-the-walk"),
        pytest.param("127.0.0.1", [("X-Forwarded-For", "203.0.113.7:4711")], "203.0.113.7", id="ipv4-with-port"),
        pytest.param("127.0.0.1", [("X-Forwarded-For", "[2001:db8::1]:4711")], "2001:db8::1", id="ipv6-with-port"),
        pytest.param("127.0.0.1", [("X-Forwarded-For", "2001:db8::1")], "2001:db8::1", id="ipv6"),
        pytest.param("127.0.0.1", [("X-Real-IP", "203.0.113.8")], "203.0.113.8", id="x-real-ip"),
        pytest.param("127.0.0.1", [("X-Real-IP", "203.0.113.8"), ("X-Forwarded-For", "203.0.113.7")], "203.0.113.7", id="x-forwarded-for-wins"),
        pytest.param("127.0.0.1", [("X-Real-IP", "not an address")], "127.0.0.1", id="bad-x-real-ip"),
        pytest.param("::ffff:127.0.0.1", [("X-Forwarded-For", "203.0.113.7")], "203.0.113.7", id="ipv4-mapped-peer"),
        pytest.param("192.0.2.50", [("X-Forwarded-For", "203.0.113.7"), ("X-Real-IP", "203.0.113.8")], "192.0.2.50", id="untrusted-peer"),
        pytest.param("127.0.0.2", [("X-Forwarded-For", "203.0.113.7")], "127.0.0.2", id="untrusted-loopback"),
    ],
)
def test_the_client_address(peer: str, headers: list[tuple[str, str]], expected: str) -> None:
    assert client(peer, *headers) == expected


@pytest.mark.parametrize(
    ("peer", "proto", "host", "expected"),
    [
        ("127.0.0.1", "https", "tools.example.com", ("https", "tools.example.com", "tools.example.com")),
        ("127.0.0.1", "https, http", "a.example, tools.example.com:8443", ("http", "tools.example.com:8443", "tools.example.com")),
        ("127.0.0.1", "HTTPS", "[2001:db8::1]:8443", ("https", "[2001:db8::1]:8443", "[2001:db8::1]")),
        ("127.0.0.1", "ftp", "evil.example/path", ("http", "askd.internal:8765", "askd.internal")),
        ("127.0.0.1", "", "user@evil.example", ("http", "askd.internal:8765", "askd.internal")),
        ("192.0.2.50", "https", "evil.example", ("http", "askd.internal:8765", "askd.internal")),
    ],
)
def test_the_scheme_and_host(peer: str, proto: str, host: str, expected: tuple[str, str, str]) -> None:
    r = request(peer, ("X-Forwarded-Proto", proto), ("X-Forwarded-Host", host))
    apply_forwarded(r, TRUSTED)
    assert (r.protocol, r.host, r.host_name) == expected


def test_nothing_is_believed_when_nothing_is_trusted() -> None:
    r = request("127.0.0.1", ("X-Forwarded-For", "203.0.113.7"), ("X-Forwarded-Proto", "https"))
    apply_forwarded(r, [])
    assert (r.remote_ip, r.protocol) == ("127.0.0.1", "http")


@pytest.mark.parametrize(
    ("text", "expected"),
    [("1.2.3.4", "1.2.3.4"), (" 1.2.3.4:80 ", "1.2.3.4"), ("[::1]", "::1"), ("::ffff:10.0.0.1", "10.0.0.1"), ("[::1", None), ("", None), ("_hidden", None)],
)
def test_parse_ip(text: str, expected: str | None) -> None:
    ip = parse_ip(text)
    assert (str(ip) if ip is not None else None) == expected


@pytest.mark.parametrize(
    ("url", "origin"),
    [
        ("https://Tools.Example.com/askd/", "https://tools.example.com"),
        ("https://tools.example.com:443/", "https://tools.example.com"),
        ("http://127.0.0.1:8080/askd", "http://127.0.0.1:8080"),
        ("https://[2001:db8::1]:8443/", "https://[2001:db8::1]:8443"),
    ],
)
def test_origin_of(url: str, origin: str) -> None:
    assert origin_of(url) == origin
