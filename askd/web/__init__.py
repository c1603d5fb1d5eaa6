"""The built-in web page's static files (served by ``askd.server.http.web``),
and what pages rendered on the server share with it: Markdown
(``askd.web.markdown``) and the choice of language (``askd.web.languages``)."""

from pathlib import Path

WEB_DIR = Path(__file__).resolve().parent
STATIC_DIR = WEB_DIR / "static"
