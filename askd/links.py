"""Moved to ``askd.channels.links`` (issue 31). This name stays only while
``askd.server.link_page`` imports it: it is that very module."""

import sys

from askd.channels import links as _moved

sys.modules[__name__] = _moved
