"""What a message, a listing or a log may show of a URL.

An endpoint URL can carry a secret: ``user:password@`` (a WDA behind an authenticating proxy,
a model server), a key in its query (``?api-key=…``). Everything that names an endpoint to a
person, a log, a model or another principal names ``shown_url(url)``; only the client that
connects holds the whole URL. One function for the planner's endpoints and the iPhones' WDA
(the database's URL is SQLAlchemy's own ``render_as_string(hide_password=True)``).

May import: the standard library.
"""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["shown_url"]


def shown_url(url: str) -> str:
    """Scheme, host, port and path; no ``user:password``, query or fragment. A string that
    is not a URL with a scheme comes back as it is."""
    parts = urlsplit(url)
    if not parts.scheme:
        return url
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        port = ""
    return f"{parts.scheme}://{host}{port}{parts.path}".rstrip("/")
