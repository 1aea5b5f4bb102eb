"""A capped tail of a byte stream (the bot's stderr)."""

from __future__ import annotations

__all__ = ["ByteTail"]


class ByteTail:
    """Keep the last ``cap`` bytes appended, and count the bytes dropped before them."""

    def __init__(self, cap: int) -> None:
        if cap < 0:
            raise ValueError("cap must be >= 0")
        self.cap = cap
        self._buf = bytearray()
        self.dropped = 0
        self.total = 0

    def append(self, data: bytes) -> None:
        self.total += len(data)
        if len(data) >= self.cap:
            self.dropped += len(self._buf) + len(data) - self.cap
            self._buf[:] = data[len(data) - self.cap :] if self.cap else b""
            return
        self._buf += data
        excess = len(self._buf) - self.cap
        if excess > 0:
            # Deleting from the front of a bytearray is O(1) amortized in CPython.
            del self._buf[:excess]
            self.dropped += excess

    def text(self, *, reset: bool = False) -> str:
        """The tail decoded as UTF-8 (undecodable bytes replaced), preceded by a
        ``[… N bytes dropped …]`` line when anything was dropped. ``reset`` empties it."""
        body = self._buf.decode("utf-8", errors="replace")
        if self.dropped:
            body = f"[… {self.dropped} bytes dropped …]\n{body}"
        if reset:
            self._buf.clear()
            self.dropped = 0
        return body
