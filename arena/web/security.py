"""Sessions, CSRF and the headers every response carries.

- A browser logs in with its team token once; it then holds a session cookie (HttpOnly,
  SameSite=Lax, Secure when the request came over HTTPS, as a reverse proxy says with
  ``X-Forwarded-Proto``) that names the team and carries a CSRF token, signed with the
  server's secret (HMAC-SHA256; ``RESULTS/web.secret``, made on first start, mode 0600). The
  token itself is never kept in the cookie, a log or a page.
- Every form that changes something carries the session's CSRF token in a hidden field
  (``csrf``), compared in constant time; the login form, before there is a session, a
  random one also set as a cookie (double submit).
- The API authenticates by ``Authorization: Bearer TOKEN`` only for what changes something:
  a cookie alone never makes a POST of the API count (so no CSRF there); its GETs also take
  the session, so that a logged-in page can read its JSON twin.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

SESSION_COOKIE = "arena_session"
LOGIN_COOKIE = "arena_login"
#: How long a session lasts without logging in again.
SESSION_S = 7 * 24 * 3600
SECRET_NAME = "web.secret"

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
#: Sent with every response (pages, JSON, static files, errors).
SECURITY_HEADERS = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cross-origin-opener-policy": "same-origin",
}


def load_secret(results: Path) -> bytes:
    """The server's signing secret, made on first use (readable by its owner only)."""
    path = results / SECRET_NAME
    try:
        data = path.read_bytes()
        if len(data) >= 32:
            return data[:64]
    except FileNotFoundError:
        pass
    secret = secrets.token_bytes(32)
    tmp = path.with_name(f".{SECRET_NAME}.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, secret)
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)  # the first server to make one wins; others read it
    except FileExistsError:
        tmp.unlink()
        return path.read_bytes()[:64]
    tmp.unlink()
    return secret


@dataclass(frozen=True, slots=True)
class Session:
    team_id: int
    csrf: str
    issued: float


class Signer:
    """Signs and checks session cookies with the server's secret."""

    def __init__(self, secret: bytes) -> None:
        self._key = hashlib.sha256(b"arena session\0" + secret).digest()

    def _mac(self, body: bytes) -> str:
        return base64.urlsafe_b64encode(hmac.new(self._key, body, hashlib.sha256).digest()).decode().rstrip("=")

    def session_cookie(self, team_id: int) -> tuple[str, Session]:
        session = Session(team_id, secrets.token_urlsafe(24), time.time())
        body = json.dumps({"t": team_id, "c": session.csrf, "i": int(session.issued)}, separators=(",", ":")).encode()
        value = base64.urlsafe_b64encode(body).decode().rstrip("=")
        return f"{value}.{self._mac(body)}", session

    def read_session(self, cookie: str | None) -> Session | None:
        """The session a cookie holds, or None for a missing, forged, malformed or expired one."""
        if not cookie or len(cookie) > 512 or cookie.count(".") != 1:
            return None
        value, mac = cookie.split(".")
        try:
            body = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
        except ValueError:
            return None
        if not hmac.compare_digest(mac, self._mac(body)):
            return None
        try:
            doc = json.loads(body)
            team_id, csrf, issued = doc["t"], doc["c"], doc["i"]
        except (ValueError, KeyError, TypeError):
            return None
        if type(team_id) is not int or not isinstance(csrf, str) or type(issued) is not int:
            return None
        if not 0 <= time.time() - issued <= SESSION_S:
            return None
        return Session(team_id, csrf, float(issued))


def same_token(given: object, expected: str) -> bool:
    """A form's CSRF field against the expected token, in constant time."""
    return isinstance(given, str) and bool(expected) and hmac.compare_digest(given.encode(), expected.encode())


def bearer_token(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer TOKEN`` header (None: none, or another scheme)."""
    if not header:
        return None
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or len(token) > 256:
        return None
    return token
