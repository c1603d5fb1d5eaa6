"""The HTTP handlers: the agent and admin APIs, the page and its one-time
codes, the answer link pages, health, the JWKS; their shared base and the
spec's error codes."""
