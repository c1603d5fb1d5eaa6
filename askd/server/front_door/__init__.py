"""What a request passes before a handler acts: connection caps and the
``Host`` rule, trusted proxies, TLS, the token check and revocation."""
