"""The built-in web page's static files (served by ``askd.server.web``)."""
