"""The variables the kubelet puts into a pod for each Service of its
namespace, built as Kubernetes documents them ("Discovering services:
environment variables", kubernetes.io/docs/concepts/services-networking/service/)
and as its kubelet writes them (pkg/kubelet/envvars): the Service's name
upper-cased with ``-`` as ``_``; ``_SERVICE_HOST`` and ``_SERVICE_PORT``
(the first port), ``_SERVICE_PORT_{NAME}`` per named port; Docker-links'
``_PORT`` (the first port's URL) and ``_PORT_{PORT}_{PROTOCOL}`` with
``_PROTO``, ``_PORT``, ``_ADDR`` for every port; IPv6 bracketed in URLs."""

from __future__ import annotations

#: A Service named ``askd`` with one port, as the issue saw it injected.
ASKD_SERVICE = {
    "ASKD_SERVICE_HOST": "10.96.0.12",
    "ASKD_SERVICE_PORT": "8765",
    "ASKD_PORT": "tcp://10.96.0.12:8765",
    "ASKD_PORT_8765_TCP": "tcp://10.96.0.12:8765",
    "ASKD_PORT_8765_TCP_PROTO": "tcp",
    "ASKD_PORT_8765_TCP_PORT": "8765",
    "ASKD_PORT_8765_TCP_ADDR": "10.96.0.12",
}


def service_env(name: str, cluster_ip: str, ports: list[tuple[int, str, str | None]]) -> dict[str, str]:
    """The links of Service ``name``; ``ports``: (port, protocol, port name or None), the first first."""
    prefix = name.upper().replace("-", "_")
    host = f"[{cluster_ip}]" if ":" in cluster_ip else cluster_ip
    env = {f"{prefix}_SERVICE_HOST": cluster_ip, f"{prefix}_SERVICE_PORT": str(ports[0][0])}
    for port, _, port_name in ports:
        if port_name:
            env[f"{prefix}_SERVICE_PORT_{port_name.upper().replace('-', '_')}"] = str(port)
    env[f"{prefix}_PORT"] = f"{ports[0][1].lower()}://{host}:{ports[0][0]}"
    for port, protocol, _ in ports:
        each = f"{prefix}_PORT_{port}_{protocol.upper()}"
        env[each] = f"{protocol.lower()}://{host}:{port}"
        env[f"{each}_PROTO"] = protocol.lower()
        env[f"{each}_PORT"] = str(port)
        env[f"{each}_ADDR"] = cluster_ip
    return env


#: A namespace's worth: askd's Service with a named port, its admin
#: listener's (``ASKD_ADMIN_PORT`` is also a setting's name), its Redis, one
#: on IPv6 with several ports and protocols, and someone else's.
NAMESPACE = {
    **service_env("askd", "10.96.0.12", [(8765, "TCP", "http")]),
    **service_env("askd-admin", "10.96.0.13", [(8766, "TCP", None)]),
    **service_env("askd-redis", "10.96.0.14", [(6379, "TCP", "redis")]),
    **service_env("askd-dns", "fd00:10:96::a", [(53, "UDP", "dns"), (53, "TCP", "dns-tcp"), (9153, "SCTP", "metrics")]),
    **service_env("kubernetes", "10.96.0.1", [(443, "TCP", "https")]),
}
