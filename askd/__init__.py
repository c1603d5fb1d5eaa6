"""askd: lets an AI agent ask a human a question and wait for the answer,
over WebSocket links that may drop at any time."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("askd")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+unknown"
