"""The dashboard's session cookie: a signed, expiring session identifier, never the token.

Signing in with an API token gives the browser ``<session id>.<expires>.<signature>``:
an identifier (the hex of the token's name, ``~``, random), its expiry (Unix seconds) and an
HMAC-SHA256 over both. The key is derived from that token, so changing it signs its browsers
out; the cookie itself says nothing about the token (a copied cookie expires, a leaked one is
not the token that the API's clients use). The name says whose session it is (``server.auth``):
any named token of ``server.tokens`` signs in, with its own role.

Stdlib ``hmac`` rather than ``itsdangerous``: the format is these three fields and one
``compare_digest``, a dozen lines; itsdangerous's ``TimestampSigner`` would do the same
for a new dependency. Stateless on purpose: several instances sharing a database accept
each other's sessions without a session table.

May import: the standard library.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time

__all__ = ["SESSION_COOKIE", "issue_session", "session_name", "session_valid"]

SESSION_COOKIE = "mobile_agent_session"


def _key(api_token: str) -> bytes:
    return hmac.new(api_token.encode(), b"mobile-agent dashboard session v1", hashlib.sha256).digest()


def _signature(api_token: str, payload: str) -> str:
    return hmac.new(_key(api_token), payload.encode(), hashlib.sha256).hexdigest()


def issue_session(api_token: str, ttl_s: float, *, now: float | None = None, name: str = "default") -> str:
    """A new cookie value for the token named ``name``, valid for ``ttl_s`` seconds."""
    expires = int((time.time() if now is None else now) + ttl_s)
    payload = f"{name.encode('utf-8', 'replace').hex()}~{secrets.token_urlsafe(18)}.{expires}"
    return f"{payload}.{_signature(api_token, payload)}"


def session_name(value: str) -> str | None:
    """The token name a cookie value claims (checked by ``session_valid`` with that token), or None."""
    session_id = value.partition(".")[0]
    name_hex, tilde, _ = session_id.partition("~")
    if not tilde or len(name_hex) > 400:
        return None
    try:
        return bytes.fromhex(name_hex).decode("utf-8")
    except ValueError:
        return None


def session_valid(api_token: str, value: str, *, now: float | None = None) -> bool:
    """True for a cookie this token signed that has not expired."""
    session_id, _, rest = value.partition(".")
    expires, _, signature = rest.partition(".")
    if not (session_id and expires.isascii() and expires.isdigit() and len(expires) < 16 and signature):
        return False
    expected = _signature(api_token, f"{session_id}.{expires}")
    if not hmac.compare_digest(signature.encode("utf-8", "replace"), expected.encode()):
        return False
    return (time.time() if now is None else now) < int(expires)
