"""askd's configuration (installed as ``askd.config``)."""

from askd.config.settings import ConfigError, Settings, load_settings

__all__ = ["ConfigError", "Settings", "load_settings"]
