"""A bounded, cancellation-safe line reader (trio has none)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import trio

from ._errors import LineTooLong

__all__ = ["BoundedLineReader"]

# Read at least this much per call, so that a small cap does not mean tiny reads.
_MIN_READ = 4096
# Chunk size while skipping the rest of an overlong line.
_DISCARD_READ = 65536
# An overlong line that goes on is refused again after each this many more bytes (or four
# times the cap, if more): a line with no end costs a bounded amount per refusal.
_SKIP_REPORT = 1 << 20


class BoundedLineReader:
    """Split a byte stream into ``\\n``-terminated lines, never holding much more than
    one line's cap in memory.

    ``receive_some(n)`` is awaited for at most ``n`` more bytes; it returns ``b""`` at the
    end of the stream. It must be cancellation-safe in trio's sense (when cancelled it has
    consumed nothing), which makes :meth:`receive_line` cancellation-safe too: a
    cancelled call loses no bytes, and the next call carries on where it stopped.
    """

    def __init__(self, receive_some: Callable[[int], Awaitable[bytes]]) -> None:
        self._receive_some = receive_some
        self._buf = bytearray()
        # How many leading bytes of _buf are known to hold no b"\n": avoids rescanning a
        # long partial line from the start after every small read.
        self._scanned = 0
        # True while skipping the remainder of an overlong line, and how many of its
        # bytes have been skipped since it was last refused.
        self._discarding = False
        self._skipped = 0
        self._eof = False
        self._busy = False

    @property
    def buffered(self) -> int:
        """Bytes read from the stream but not yet returned as (part of) a line."""
        return len(self._buf)

    @property
    def at_eof(self) -> bool:
        """The stream has ended (further calls can only return already buffered lines)."""
        return self._eof

    async def receive_line(self, max_bytes: int = 65536) -> bytes:
        """Return the next line without its ``\\n`` (and without a ``\\r`` just before it).

        Raises :class:`LineTooLong` if the line is longer than ``max_bytes`` (terminator
        not counted); the rest of it is skipped, so the following call returns the line
        after it (a line that goes on and on is refused again after every megabyte or
        so skipped, so that no call skips without end). Raises :exc:`EOFError` at the end of the stream, also when the stream
        ends in the middle of a line (that fragment is never returned; the error's first
        argument is its length in bytes). At most about ``max_bytes`` bytes are buffered.
        """
        if max_bytes < 1:
            raise ValueError("max_bytes must be at least 1")
        if self._busy:
            raise trio.BusyResourceError("another task is already reading lines from this bot")
        self._busy = True
        try:
            # trio's convention: cancellation may strike on entry, never after a line has
            # been taken out of the buffer (that would lose it).
            await trio.lowlevel.checkpoint_if_cancelled()
            waited = False
            while True:
                line = self.take_buffered_line(max_bytes)
                if line is not None:
                    if not waited:
                        await trio.lowlevel.cancel_shielded_checkpoint()
                    return line
                if self._eof:
                    partial = 0 if self._discarding else len(self._buf)
                    raise EOFError(partial)
                data = await self._receive_some(self.wanted(max_bytes))
                waited = True
                self.feed(data)
        finally:
            self._busy = False

    # -- the synchronous core, also for callers that do their own waiting ----------------

    @property
    def busy(self) -> bool:
        """A :meth:`receive_line` call is in progress (in another task)."""
        return self._busy

    def wanted(self, max_bytes: int) -> int:
        """How many bytes the next read should ask for: the rest of a line of up to
        ``max_bytes`` (at least a few KB), or a large chunk while skipping a long line."""
        if self._discarding:
            return _DISCARD_READ
        return max(max_bytes + 2 - len(self._buf), _MIN_READ)

    def feed(self, data: bytes) -> None:
        """Add bytes read from the stream; ``b""`` means the stream has ended."""
        if data:
            self._buf += data
        else:
            self._eof = True

    def receive_line_nowait(self, read_some: Callable[[int], bytes], max_bytes: int) -> bytes | None:
        """:meth:`receive_line` for a caller that does its own waiting: ``read_some(n)``
        returns at most ``n`` bytes without waiting (``b""`` at the end of the stream)
        or raises :exc:`BlockingIOError` when none are there. Returns the next line, or
        None when more bytes are needed (or the stream has ended: see :attr:`at_eof`).
        Raises :class:`LineTooLong` as :meth:`receive_line` does.

        Each call makes at most one ``read_some`` call, so that the caller bounds the
        work one wake-up may do however fast the stream comes: None then only means
        "no whole line yet"; bytes still waiting are found by the next call (a caller
        waiting for readiness sees them, as the reader holds no whole line then)."""
        if self._busy:
            raise trio.BusyResourceError("another task is already reading lines from this bot")
        buf = self._buf
        if buf or self._eof or self._discarding:
            line = self.take_buffered_line(max_bytes)
            if line is not None or self._eof:
                return line
        try:
            data = read_some(_DISCARD_READ if self._discarding else max(max_bytes + 2 - len(buf), _MIN_READ))
        except BlockingIOError:
            return None
        if data and not buf and not self._discarding:
            end = data.find(b"\n")
            if end == len(data) - 1:  # exactly one whole line (the usual reply): no copy
                stop = end - 1 if end > 0 and data[end - 1] == 0x0D else end
                if stop <= max_bytes:
                    return data[:stop]
        self.feed(data)
        return self.take_buffered_line(max_bytes)

    def take_buffered_line(self, max_bytes: int) -> bytes | None:
        """The next complete line already buffered (as :meth:`receive_line` returns it),
        or None if more bytes are needed (or the stream has ended: see :attr:`at_eof`).
        Raises :class:`LineTooLong` as :meth:`receive_line` does."""
        if self._discarding:
            self._skip_rest_of_long_line(max_bytes)
            if self._discarding:
                return None
        return self._take_line(max_bytes)

    def _skip_rest_of_long_line(self, max_bytes: int) -> None:
        end = self._buf.find(b"\n")
        self._scanned = 0
        if end >= 0:
            del self._buf[: end + 1]
            self._discarding = False
            return
        self._skipped += len(self._buf)
        self._buf.clear()
        report = max(_SKIP_REPORT, 4 * max_bytes)
        if self._skipped >= report:
            skipped, self._skipped = self._skipped, 0
            raise LineTooLong(
                f"line longer than {max_bytes} bytes still going: {skipped} more bytes with no newline skipped",
                limit=max_bytes,
            )

    def _take_line(self, max_bytes: int) -> bytes | None:
        """Pop one complete line from the buffer, or return None if there is none yet."""
        end = self._buf.find(b"\n", self._scanned)
        if end < 0:
            self._scanned = len(self._buf)
            # One byte of slack: a trailing b"\r" may be the start of a b"\r\n" terminator.
            if len(self._buf) > max_bytes + 1:
                size = len(self._buf)
                self._buf.clear()
                self._scanned = 0
                self._discarding = True
                self._skipped = 0
                raise LineTooLong(
                    f"line longer than {max_bytes} bytes (no newline in its first {size} bytes)",
                    limit=max_bytes,
                )
            return None
        stop = end - 1 if end > 0 and self._buf[end - 1] == 0x0D else end
        line = bytes(self._buf[:stop])
        del self._buf[: end + 1]
        self._scanned = 0
        if len(line) > max_bytes:
            raise LineTooLong(
                f"line of {len(line)} bytes is longer than {max_bytes} bytes", limit=max_bytes
            )
        return line
