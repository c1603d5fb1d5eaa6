"""The user's WebSocket: the handler, its sending side, the pinger."""
