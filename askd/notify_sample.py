"""Moved to ``askd.channels.sample`` (issue 31). This name stays only while
``askd.server.admin_api`` imports it: it is that very module."""

import sys

from askd.channels import sample as _moved

sys.modules[__name__] = _moved
