"""The bot-process layer: real subprocesses (tests/data/procbots/) for everything a hostile or
clumsy bot can do, and MockClock for the time arithmetic."""

from __future__ import annotations

import functools
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.bots import (
    BotCrashed,
    BotGroup,
    BotSpec,
    BotStartError,
    BotTimeout,
    BotWriteTimeout,
    BoundedLineReader,
    Budget,
    LineTooLong,
    Question,
    await_reply,
    lone_errors_unwrapped,
    minimal_env,
    open_bot,
    request,
    send_request,
    serve_bot,
)

PROCBOTS = Path(__file__).parents[1] / "data" / "procbots"


def trio_test(fn):
    """Run an async test function under trio.run (pytest fixtures still work)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return trio.run(functools.partial(fn, *args, **kwargs))

    return wrapper


def mock_clock_test(fn):
    """Run an async test under a MockClock that jumps whenever every task is blocked."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        clock = trio.testing.MockClock(autojump_threshold=0)
        return trio.run(functools.partial(fn, *args, **kwargs), clock=clock)

    return wrapper


def procbot(script: str, *args: str, name: str | None = None) -> BotSpec:
    return BotSpec(
        name=name or script,
        argv=(sys.executable, str(PROCBOTS / f"{script}.py"), *args),
        cwd=PROCBOTS,
    )


def gone(pid: int) -> bool:
    """No such process, not even a zombie."""
    return not os.path.exists(f"/proc/{pid}")


def _stat_fields(pid: int) -> list[bytes]:
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return []
    return raw[raw.rfind(b")") + 2 :].split()


def state_of(pid: int) -> str | None:
    fields = _stat_fields(pid)
    return fields[0].decode() if fields else None


def ppid_of(pid: int) -> int | None:
    fields = _stat_fields(pid)
    return int(fields[1]) if fields else None


# -- spec and start-up -------------------------------------------------------------------


def test_spec_normalises_argv_and_cwd():
    spec = BotSpec(name="b", argv=["python", "main.py"], cwd="bots/b")  # type: ignore[arg-type]
    assert spec.argv == ("python", "main.py")
    assert spec.cwd == Path("bots/b")
    assert hash(spec) == hash(BotSpec(name="b", argv=("python", "main.py"), cwd=Path("bots/b")))
    with pytest.raises(ValueError, match="argv is empty"):
        BotSpec(name="b", argv=(), cwd=Path("."))
    with pytest.raises(TypeError):
        BotSpec(name="b", argv="python main.py", cwd=Path("."))  # type: ignore[arg-type]


def test_minimal_env_keeps_only_what_bots_need():
    env = minimal_env({"PATH": "/bin", "HOME": "/h", "SECRET": "x", "PYTHONPATH": "/p"})
    assert env == {"PATH": "/bin", "HOME": "/h", "LANG": "C.UTF-8", "PYTHONPATH": "/p"}


@trio_test
async def test_missing_executable_is_a_start_error_naming_the_bot():
    spec = BotSpec(name="ghost", argv=("/nonexistent/ghost-bot", "--x"), cwd=PROCBOTS)
    with pytest.raises(BotStartError) as info:
        async with open_bot(spec):
            pytest.fail("should not start")
    assert "ghost" in str(info.value)
    assert "/nonexistent/ghost-bot" in str(info.value)
    assert info.value.argv == spec.argv


@trio_test
async def test_non_executable_file_and_missing_cwd_are_start_errors(tmp_path):
    script = tmp_path / "bot"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o644)
    with pytest.raises(BotStartError, match="Permission denied"):
        async with open_bot(BotSpec(name="noexec", argv=(str(script),), cwd=tmp_path)):
            pass
    with pytest.raises(BotStartError, match="nowhere"):
        async with open_bot(BotSpec(name="lost", argv=("true",), cwd=tmp_path / "nowhere")):
            pass


# -- talking -----------------------------------------------------------------------------


@trio_test
async def test_echo_round_trip():
    async with open_bot(procbot("scripted")) as bot:
        assert bot.alive and not bot.broken and bot.returncode is None
        await bot.send(b"echo hello\n")
        assert await bot.receive_line() == b"hello"
        await bot.send(b"echo \xc3\xa9t\xc3\xa9\n")
        assert await bot.receive_line() == "été".encode()
    assert bot.returncode == 0  # it left by itself when its stdin was closed


@trio_test
async def test_reply_split_across_writes_and_lines_sharing_a_write():
    async with open_bot(procbot("scripted")) as bot:
        await bot.send(b"split\n")
        assert await bot.receive_line() == b"hello world"
        await bot.send(b"multi\n")
        assert [await bot.receive_line() for _ in range(3)] == [b"one", b"two", b"three"]


@trio_test
async def test_crlf_terminator_is_stripped():
    async with open_bot(procbot("scripted")) as bot:
        await bot.send(b"crlf {}\n")
        assert await bot.receive_line() == b"{}"


@trio_test
async def test_overlong_line_is_refused_then_the_reader_resyncs():
    async with open_bot(procbot("scripted")) as bot:
        await bot.send(b"long 200000\n")
        with pytest.raises(LineTooLong) as info:
            await bot.receive_line(max_bytes=65536)
        assert info.value.limit == 65536 and info.value.bot == "scripted"
        assert bot._reader.buffered <= 65536 + 4098
        # The rest of the long line is still arriving; it is skipped, not returned.
        assert await bot.receive_line(max_bytes=65536) == b"after"
        await bot.send(b"echo still-usable\n")
        assert await bot.receive_line() == b"still-usable"


@trio_test
async def test_endless_line_cannot_escape_the_deadline():
    # cat writes faster than we read, so there is always data waiting: the reader must
    # still let the deadline (and every other task) in.
    spec = BotSpec(name="zeros", argv=("cat", "/dev/zero"), cwd=PROCBOTS)
    async with open_bot(spec) as bot:
        with pytest.raises(LineTooLong):
            await bot.receive_line()
        start = trio.current_time()
        refusals = 0
        with trio.move_on_after(0.3):  # skipping the rest never ends, but the deadline does
            while True:
                # ... and it is refused again every megabyte or so, never returned.
                with pytest.raises(LineTooLong, match="still going"):
                    await bot.receive_line()
                refusals += 1
        assert trio.current_time() - start < 0.6
        assert refusals >= 1
        assert bot._reader.buffered <= 65536


@trio_test
async def test_exit_is_a_crash_with_status_and_stderr():
    async with open_bot(procbot("scripted")) as bot:
        await bot.send(b"exit 3\n")
        with pytest.raises(BotCrashed) as info:
            await bot.receive_line()
        assert info.value.returncode == 3
        assert "exited with status 3" in str(info.value)
        assert "goodbye from scripted" in info.value.stderr_tail
        assert not bot.alive and bot.returncode == 3
        with pytest.raises(BotCrashed):  # and it stays crashed
            await bot.receive_line()
        with pytest.raises(BotCrashed, match="broken pipe"):  # writing to it fails too
            await bot.send(b"echo x\n")
        assert bot.broken


@trio_test
async def test_killed_bot_reports_the_signal():
    async with open_bot(procbot("scripted")) as bot:
        await bot.send(b"kill\n")
        with pytest.raises(BotCrashed, match=r"killed by signal 9 \(SIGKILL\)") as info:
            await bot.receive_line()
        assert info.value.returncode == -signal.SIGKILL


@trio_test
async def test_half_a_line_then_exit_is_a_crash():
    async with open_bot(procbot("scripted")) as bot:
        await bot.send(b"partial\n")
        with pytest.raises(BotCrashed, match="middle of a line") as info:
            await bot.receive_line()
        assert info.value.returncode == 4


@trio_test
async def test_exit_while_a_grandchild_holds_stdout_is_a_prompt_crash():
    async with open_bot(procbot("forker")) as bot:
        await bot.send(b"orphan-exit\n")
        start = trio.current_time()
        orphan = int(await bot.receive_line())  # written before the exit: still delivered
        with pytest.raises(BotCrashed) as info:
            with trio.fail_after(5):
                await bot.receive_line()
        assert info.value.returncode == 5
        assert trio.current_time() - start < 1.0
        # It left the session and was orphaned at once, but it holds the bot's pipes.
        assert ppid_of(orphan) == os.getpid() and not gone(orphan)
    assert gone(orphan)


# -- deadlines ---------------------------------------------------------------------------


@trio_test
async def test_silent_bot_times_out_at_the_deadline():
    async with open_bot(procbot("scripted")) as bot:
        start = trio.current_time()
        with pytest.raises(BotTimeout) as info:
            await request(bot, b"silent\n", timeout_s=0.3)
        took = trio.current_time() - start
        assert 0.3 <= took < 0.6
        assert info.value.timeout_s == 0.3 and info.value.elapsed_s >= 0.3
        assert bot.alive and not bot.broken  # a timeout alone does not spoil the bot
        reply = await request(bot, b"echo next\n", timeout_s=2)
        assert reply.line == b"next" and 0 <= reply.elapsed_s < 2


@trio_test
async def test_late_reply_stays_buffered_for_the_next_read():
    async with open_bot(procbot("scripted")) as bot:
        with pytest.raises(BotTimeout):
            await request(bot, b"sleep 0.3\n", timeout_s=0.1)
        await bot.send(b"echo fresh\n")
        assert await bot.receive_line() == b"late"  # the referee discards it by its re
        assert await bot.receive_line() == b"fresh"


@trio_test
async def test_write_that_cannot_complete_breaks_the_bot():
    async with open_bot(procbot("stubborn")) as bot:
        assert await bot.receive_line() == b"ready"
        # It never reads its stdin, so the pipe fills up and the write cannot finish.
        with pytest.raises(BotWriteTimeout):
            await send_request(bot, b"y" * (16 << 20), timeout_s=0.3)
        assert bot.broken
        with pytest.raises(BotCrashed, match="restarted"):
            await bot.send(b"z\n")
        await bot.aclose(grace=0.05, term_grace=0.05)


# -- stderr ------------------------------------------------------------------------------


@trio_test
async def test_stderr_flood_never_blocks_and_the_tail_is_capped():
    cap = 4096
    async with open_bot(procbot("scripted"), stderr_cap=cap) as bot:
        start = trio.current_time()
        for _ in range(5):  # 50 MB in all
            reply = await request(bot, b"stderr 10000000\n", timeout_s=10)
            assert reply.line == b"ok"
        assert trio.current_time() - start < 10
    tail = bot.stderr_tail()
    header, _, body = tail.partition("\n")
    assert body.endswith("stderr-end\n") and len(body.encode()) == cap
    written = 5 * (10_000_000 + len(b"\nstderr-end\n"))
    assert header == f"[… {written - cap} bytes dropped …]"
    assert bot.stderr_bytes == written


@trio_test
async def test_stderr_tail_can_be_reset_per_game():
    async with open_bot(procbot("scripted")) as bot:
        await request(bot, b"stderr 10\n", timeout_s=5)
        with trio.fail_after(5):
            while "stderr-end" not in bot.stderr_tail():
                await trio.sleep(0.01)
        assert bot.stderr_tail(reset=True) == "eeeeeeeeee\nstderr-end\n"
        assert bot.stderr_tail() == ""


# -- closing -----------------------------------------------------------------------------


@trio_test
async def test_bot_ignoring_sigterm_is_killed():
    async with open_bot(procbot("stubborn")) as bot:
        assert await bot.receive_line() == b"ready"
        start = trio.current_time()
        await bot.aclose(grace=0.2, term_grace=0.2)
        assert 0.4 <= trio.current_time() - start < 2.0
        assert bot.returncode == -signal.SIGKILL and not bot.alive
        assert gone(bot.pid)


@pytest.mark.parametrize("subreaper", ["bot-is-subreaper", "bot-turned-it-off"])
@trio_test
async def test_whole_process_tree_is_ended_and_reaped(subreaper):
    args = ("--no-subreaper", "--mid-delay", "0.6") if subreaper == "bot-turned-it-off" else ()
    async with open_bot(procbot("forker", *args), track_interval=0.1) as bot:
        reply = await request(bot, b"tree\n", timeout_s=5)
        child, grandchild = map(int, reply.line.split())
        # The grandchild escaped the process group and its parent is gone.
        assert os.getpgid(grandchild) == grandchild != bot.pid
        # Re-parented to the nearest subreaper: the bot, or else the arena.
        assert ppid_of(grandchild) == (os.getpid() if args else bot.pid)
        main = bot.pid
    for pid in (main, child, grandchild):
        assert gone(pid), f"pid {pid} still there, state {state_of(pid)}"


@trio_test
async def test_body_error_and_cancellation_still_end_the_bot():
    with pytest.raises(ZeroDivisionError):
        async with open_bot(procbot("stubborn")) as bot:
            pid = bot.pid
            1 / 0  # noqa: B018
    assert gone(pid)
    with trio.move_on_after(0.2) as scope:
        async with open_bot(procbot("stubborn")) as bot:
            pid = bot.pid
            await trio.sleep_forever()
    assert scope.cancelled_caught and gone(pid)


@trio_test
async def test_served_bot_lives_in_a_nursery_until_closed_from_another_task():
    async with trio.open_nursery() as nursery:
        bot = await nursery.start(serve_bot, procbot("scripted"))
        assert (await request(bot, b"echo served\n", timeout_s=5)).line == b"served"

        async def closer():
            await bot.aclose()

        nursery.start_soon(closer)
    assert bot.returncode == 0 and gone(bot.pid)
    with trio.move_on_after(0.2):  # cancelling the nursery closes the bot too
        async with trio.open_nursery() as nursery:
            bot = await nursery.start(serve_bot, procbot("stubborn"))
    assert bot.returncode == -signal.SIGKILL and gone(bot.pid)
    async with trio.open_nursery() as nursery:
        # Inside the block: our own nursery would wrap it in a group (trio >= 0.25).
        with pytest.raises(BotStartError):
            await nursery.start(serve_bot, BotSpec(name="x", argv=("/nope",), cwd=PROCBOTS))


def test_bots_die_with_the_arena():
    """A killed arena (no cleanup at all) takes its bots along: parent-death signal."""
    host = subprocess.Popen(
        [sys.executable, str(PROCBOTS / "arena_host.py")], stdout=subprocess.PIPE
    )
    try:
        bot_pid = int(host.stdout.readline())
        assert state_of(bot_pid) not in (None, "Z")
    finally:
        host.kill()
        host.wait()
        host.stdout.close()
    try:
        deadline = time.monotonic() + 5
        while state_of(bot_pid) not in (None, "Z") and time.monotonic() < deadline:
            time.sleep(0.02)
        assert state_of(bot_pid) in (None, "Z")
    finally:
        if state_of(bot_pid) not in (None, "Z"):
            os.kill(bot_pid, signal.SIGKILL)
        if ppid_of(bot_pid) == os.getpid():  # re-parented to us, a subreaper since open_bot
            os.waitpid(bot_pid, 0)


@trio_test
async def test_bot_stays_alive_long_after_spawn_while_idle():
    # trio's own process spawning uses a worker thread that exits after ~10 s idle; a
    # parent-death signal tied to that thread would kill the bot then.
    async with open_bot(procbot("scripted")) as bot:
        await trio.sleep(12.5)
        assert bot.alive
        assert (await request(bot, b"echo awake\n", timeout_s=2)).line == b"awake"


# -- the line reader alone ---------------------------------------------------------------


def _chunked_source(chunks: list[bytes]):
    chunks = list(chunks)

    async def receive_some(n: int) -> bytes:
        await trio.lowlevel.checkpoint()
        if not chunks:
            return b""
        head = chunks[0]
        if len(head) > n:
            chunks[0] = head[n:]
            return head[:n]
        chunks.pop(0)
        return head

    return receive_some


lines_strategy = st.lists(
    st.tuples(
        st.one_of(
            st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"").rstrip(b"\r")),
            st.integers(0, 300).map(lambda n: b"y" * n),
        ),
        st.sampled_from([b"\n", b"\r\n"]),
    ),
    max_size=20,
)


@settings(max_examples=150, deadline=None)
@given(lines=lines_strategy, cuts=st.lists(st.integers(1, 50), min_size=1), cap=st.integers(1, 120))
def test_reader_returns_each_line_or_refuses_it_whatever_the_chunking(lines, cuts, cap):
    stream = b"".join(line + end for line, end in lines)
    chunks, pos, i = [], 0, 0
    while pos < len(stream):
        size = cuts[i % len(cuts)]
        chunks.append(stream[pos : pos + size])
        pos, i = pos + size, i + 1
    expected = [line if len(line) <= cap else LineTooLong for line, _ in lines]

    async def main():
        reader = BoundedLineReader(_chunked_source(chunks))
        got = []
        while True:
            try:
                got.append(await reader.receive_line(cap))
            except LineTooLong:
                got.append(LineTooLong)
            except EOFError as exc:
                assert exc.args == (0,)
                break
            assert reader.buffered <= max(cap + 4098, 65536)
        assert got == expected

    trio.run(main)


@settings(max_examples=150, deadline=None)
@given(lines=lines_strategy, cuts=st.lists(st.integers(1, 50), min_size=1), cap=st.integers(1, 120))
def test_nowait_reads_give_the_same_lines_whatever_the_chunking(lines, cuts, cap):
    """receive_line_nowait (the BotGroup's reader) against the same stream, with "nothing
    there yet" between chunks: the same lines and refusals as receive_line."""
    stream = b"".join(line + end for line, end in lines)
    chunks, pos, i = [], 0, 0
    while pos < len(stream):
        size = cuts[i % len(cuts)]
        chunks.append(stream[pos : pos + size])
        pos, i = pos + size, i + 1
    expected = [line if len(line) <= cap else LineTooLong for line, _ in lines]
    pending = list(chunks)
    ready = [False]  # alternately "would block" and one chunk, then the end

    def read_some(n: int) -> bytes:
        ready[0] = not ready[0]
        if not ready[0]:
            raise BlockingIOError
        if not pending:
            return b""
        chunk = pending[0][:n]
        pending[0] = pending[0][n:]
        if not pending[0]:
            pending.pop(0)
        return chunk

    reader = BoundedLineReader(None)  # type: ignore[arg-type]
    got = []
    while True:
        try:
            line = reader.receive_line_nowait(read_some, cap)
        except LineTooLong:
            got.append(LineTooLong)
            continue
        if line is not None:
            got.append(line)
        elif reader.at_eof:
            break
    assert got == expected


@settings(max_examples=60, deadline=None)
@given(
    gaps=st.lists(st.floats(0, 2), min_size=1, max_size=15),
    patience=st.lists(st.floats(0.01, 3), min_size=1, max_size=15),
)
def test_cancelled_reads_lose_no_bytes(gaps, patience):
    """Chunks arrive at set times; the caller gives up and retries at random moments."""
    stream = b"".join(b"line%d\n" % i for i in range(len(gaps)))
    step = max(1, len(stream) // len(gaps))
    arrivals = [(sum(gaps[: i + 1]), stream[i * step : (i + 1) * step]) for i in range(len(gaps))]
    arrivals.append((sum(gaps) + 1, stream[len(gaps) * step :]))

    async def receive_some(n: int) -> bytes:
        if not arrivals:
            await trio.lowlevel.checkpoint()
            return b""
        when, data = arrivals[0]
        await trio.sleep_until(when)  # cancellation here consumes nothing
        arrivals.pop(0)
        return data if data else await receive_some(n)

    async def main():
        reader = BoundedLineReader(receive_some)
        got, i = [], 0
        while True:
            with trio.move_on_after(patience[i % len(patience)]):
                try:
                    got.append(await reader.receive_line(100))
                except EOFError:
                    break
            i += 1
        assert got == [b"line%d" % i for i in range(len(gaps))]

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


# -- time budgets (MockClock, no process) ------------------------------------------------


def test_bank_deadline_and_charge_arithmetic():
    tc = Budget(turn_ms=1000, bank_ms=10_000)
    bank = tc.new_bank()
    assert bank.deadline_for_turn() == pytest.approx(11.0)
    assert bank.charge(400) == 10_000  # within turn_ms: free
    assert bank.charge(2500) == 8_500  # 1.5 s over
    assert bank.deadline_for_turn() == pytest.approx(9.5)
    assert bank.charge(1_000_000) == 0  # a timeout empties it, never below zero
    assert bank.deadline_for_turn() == pytest.approx(1.0)
    assert tc.hello_timeout_s == pytest.approx(10.0)


def test_time_scale_stretches_deadlines_not_the_nominal_bank():
    tc = Budget(turn_ms=1000, bank_ms=2000, time_scale=3.0)
    bank = tc.new_bank()
    assert bank.deadline_for_turn() == pytest.approx(9.0)
    assert bank.charge(4500) == pytest.approx(1500)  # 4.5 s real = 1.5 s nominal
    assert bank.remaining_scaled_ms == 4500  # what the bot can really spend
    assert tc.hello_timeout_s == pytest.approx(30.0)
    assert tc.scaled_ms(tc.turn_ms) == 3000


def test_no_timeout_means_infinite_deadlines_and_no_charge():
    tc = Budget(no_timeout=True)
    bank = tc.new_bank()
    assert bank.deadline_for_turn() == math.inf and tc.hello_timeout_s == math.inf
    assert bank.charge(60_000) == tc.bank_ms


def test_time_control_rejects_nonsense():
    with pytest.raises(ValueError):
        Budget(turn_ms=-1)
    with pytest.raises(ValueError):
        Budget(time_scale=0)


class FakeBot:
    """Replies ``delay`` seconds after each request is written; cancellation-safe."""

    name = "fake"

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.due: list[tuple[float, bytes]] = []

    async def send(self, data: bytes) -> None:
        await trio.sleep(0.001)  # a write takes a moment, which is the bot's time (its stdin may be full)
        self.due.append((trio.current_time() + self.delay, b"re:" + data.strip()))

    async def receive_line(self, max_bytes: int = 65536) -> bytes:
        when, line = self.due[0]
        await trio.sleep_until(when)
        self.due.pop(0)
        return line


@mock_clock_test
async def test_request_measures_from_the_write_begun_to_reply_and_charges_the_bank():
    bank = Budget(turn_ms=1000, bank_ms=10_000).new_bank()
    reply = await request(FakeBot(1.5), b"act1\n", timeout_s=bank.deadline_for_turn())
    assert reply.line == b"re:act1"
    assert reply.elapsed_s == pytest.approx(1.501)  # the write's moment included
    assert bank.charge(reply.elapsed_ms) == pytest.approx(9499)


@mock_clock_test
async def test_request_times_out_exactly_at_the_deadline_and_keeps_the_late_reply():
    bank = Budget(turn_ms=1000, bank_ms=500).new_bank()
    bot = FakeBot(5.0)
    start = trio.current_time()
    with pytest.raises(BotTimeout) as info:
        await request(bot, b"act1\n", timeout_s=bank.deadline_for_turn())
    assert info.value.elapsed_s == pytest.approx(1.5)
    assert trio.current_time() - start == pytest.approx(1.5)  # the deadline was fixed as the write began
    assert bank.charge(info.value.elapsed_s * 1000) == 0
    # The late answer is still there, in order, for the referee to discard.
    sent_at = await send_request(bot, b"act2\n", timeout_s=1.0)
    assert (await await_reply(bot, sent_at=sent_at, timeout_s=10)).line == b"re:act1"
    assert (await await_reply(bot, sent_at=sent_at, timeout_s=10)).line == b"re:act2"


@mock_clock_test
async def test_parallel_replies_are_timed_each_from_its_own_write():
    bots = [FakeBot(0.2), FakeBot(0.9), FakeBot(3.0)]
    results: dict[int, object] = {}
    sent = [await send_request(b, b"act\n", timeout_s=1) for b in bots]

    async def wait(i):
        try:
            results[i] = (await await_reply(bots[i], sent_at=sent[i], timeout_s=1.0)).elapsed_s
        except BotTimeout:
            results[i] = "timeout"

    async with trio.open_nursery() as nursery:
        for i in range(3):
            nursery.start_soon(wait, i)
    assert results[0] == pytest.approx(0.201)  # each from its own write's start
    assert results[1] == pytest.approx(0.901)
    assert results[2] == "timeout"


def test_spawning_starts_no_worker_thread():
    """open_bot starts the process synchronously from the trio thread."""
    threads_before = set(os.listdir(f"/proc/{os.getpid()}/task"))

    async def main():
        async with open_bot(procbot("scripted")) as bot:
            await request(bot, b"echo x\n", timeout_s=5)
            return set(os.listdir(f"/proc/{os.getpid()}/task")) - threads_before

    started = time.monotonic()
    assert trio.run(main) == set()
    assert time.monotonic() - started < 5


# -- several bots at once (BotGroup) -------------------------------------------------------


def _lines(drop: tuple[bytes, ...] = ()):
    """An ``accept`` that takes any line but those in ``drop`` (stale replies)."""
    return lambda i, line: None if line in drop else line


@trio_test
async def test_group_reads_replies_in_pieces_and_lines_that_share_a_write():
    async with open_bot(procbot("scripted", name="a")) as a, open_bot(procbot("scripted", name="b")) as b:
        with BotGroup() as group:
            answers = await group.exchange([Question(a, b"split\n", 5), Question(b, b"multi\n", 5)], _lines())
            assert [x.value for x in answers] == [b"hello world", b"one"]
            assert all(0 <= x.elapsed_s < 5 for x in answers)
            # b's other two lines stay buffered, are read first, and can be dropped as stale.
            answers = await group.exchange([Question(b, b"echo four\n", 5)], _lines((b"two", b"three")))
            assert answers[0].value == b"four"
            answers = await group.exchange([Question(a, b"crlf x\n", 5), Question(b, b"echo y\n", 5)], _lines())
            assert [x.value for x in answers] == [b"x", b"y"]


@trio_test
async def test_group_times_each_bot_against_its_own_deadline():
    async with open_bot(procbot("scripted", name="a")) as a, open_bot(procbot("scripted", name="b")) as b:
        with BotGroup() as group:
            start = trio.current_time()
            slow, fast = await group.exchange(
                [Question(a, b"sleep 0.4\n", 0.15), Question(b, b"sleep 0.05\n", 5)], _lines()
            )
            assert isinstance(slow, BotTimeout) and slow.timeout_s == 0.15 and slow.elapsed_s >= 0.15
            assert fast.value == b"late" and 0.05 <= fast.elapsed_s < 0.4
            assert trio.current_time() - start < 0.4 + 1  # the fast one did not wait for the slow one
            assert a.alive and not a.broken  # a timeout alone does not spoil the bot
            # a's late reply stays buffered: the next exchange drops it by content, as the referee by re
            (answer,) = await group.exchange([Question(a, b"echo next\n", 5)], _lines((b"late",)))
            assert answer.value == b"next"


@trio_test
async def test_group_reports_each_crash_and_the_others_still_answer():
    async with (
        open_bot(procbot("scripted", name="exits")) as exits,
        open_bot(procbot("scripted", name="half")) as half,
        open_bot(procbot("scripted", name="closes")) as closes,
        open_bot(procbot("scripted", name="fine")) as fine,
    ):
        with BotGroup() as group:
            answers = await group.exchange(
                [
                    Question(exits, b"exit 3\n", 5),
                    Question(half, b"partial\n", 5),
                    Question(closes, b"closeout\n", 5),
                    Question(fine, b"echo still here\n", 5),
                ],
                _lines(),
            )
            crashed, partial, closed, answer = answers
            assert isinstance(crashed, BotCrashed) and crashed.returncode == 3 and "goodbye" in str(crashed)
            assert isinstance(partial, BotCrashed) and "middle of a line" in str(partial)
            assert isinstance(closed, BotCrashed) and "output ended" in str(closed) and closes.alive
            assert answer.value == b"still here"
            # A crashed bot stays failed; the group carries on with the others.
            again = await group.exchange([Question(exits, b"echo x\n", 5), Question(fine, b"echo y\n", 5)], _lines())
            assert isinstance(again[0], BotCrashed) and again[1].value == b"y"


@trio_test
async def test_group_sees_an_exit_while_a_grandchild_holds_stdout():
    async with open_bot(procbot("forker")) as bot:
        with BotGroup() as group:
            start = trio.current_time()
            # Its one line (the orphan's pid) is not the answer: the exit must still be seen.
            (answer,) = await group.exchange([Question(bot, b"orphan-exit\n", 5)], lambda i, line: None)
            assert isinstance(answer, BotCrashed) and answer.returncode == 5
            assert trio.current_time() - start < 1.0


@trio_test
async def test_group_write_timeout_breaks_only_that_bot():
    async with open_bot(procbot("stubborn")) as stuck, open_bot(procbot("scripted")) as fine:
        with BotGroup() as group:
            # stuck never reads its stdin: the pipe fills and the request cannot be written.
            answers = await group.exchange(
                [Question(stuck, b"y" * (4 << 20) + b"\n", 0.3), Question(fine, b"echo ok\n", 5)], _lines()
            )
            assert isinstance(answers[0], BotWriteTimeout) and stuck.broken
            assert answers[1].value == b"ok" and not fine.broken
            (again,) = await group.exchange([Question(stuck, b"z\n", 5)], _lines())
            assert isinstance(again, BotCrashed) and "restarted" in str(again)
        await stuck.aclose(grace=0.05, term_grace=0.05)


@trio_test
async def test_group_cancelled_mid_write_leaves_the_bot_broken():
    async with open_bot(procbot("stubborn")) as stuck:
        with BotGroup() as group, trio.move_on_after(0.2) as scope:
            await group.exchange([Question(stuck, b"y" * (4 << 20) + b"\n", math.inf)], _lines())
        assert scope.cancelled_caught and stuck.broken
        await stuck.aclose(grace=0.05, term_grace=0.05)


@trio_test
async def test_group_refuses_an_overlong_line_and_resyncs():
    async with open_bot(procbot("scripted")) as bot:
        with BotGroup() as group:
            (answer,) = await group.exchange([Question(bot, b"long 70000\n", 5, max_bytes=1000)], _lines())
            assert isinstance(answer, LineTooLong) and answer.limit == 1000
            (answer,) = await group.exchange([Question(bot, b"echo next\n", 5)], _lines())
            assert answer.value == b"after"


@trio_test
async def test_group_reports_a_closed_bot_and_refuses_misuse():
    async with open_bot(procbot("scripted")) as bot:
        await bot.aclose()
        with BotGroup() as group:
            (answer,) = await group.exchange([Question(bot, b"echo x\n", 5)], _lines())
            assert isinstance(answer, BotCrashed) and "closed" in str(answer)
            with pytest.raises(ValueError, match="twice"):
                await group.exchange([Question(bot, b"a\n", 5), Question(bot, b"b\n", 5)], _lines())
        with pytest.raises(RuntimeError, match="closed"):
            await group.exchange([], _lines())


@trio_test
async def test_a_group_reused_after_its_bots_closed_serves_new_bots_on_the_same_fds():
    """A referee's pool reuses one group game after game: bots closed in between are
    dropped, and new bots (whose fds take the freed numbers) are watched afresh."""
    with BotGroup() as group:
        async with open_bot(procbot("scripted", name="old")) as old:
            (answer,) = await group.exchange([Question(old, b"echo 1\n", 5)], _lines())
            assert answer.value == b"1"
            old_fds = old.fds
        group.drop_closed()
        assert group._watched == {} and group._owner == {}
        async with open_bot(procbot("scripted", name="new")) as new:
            assert set(new.fds) & set(old_fds)  # the numbers came back
            (answer,) = await group.exchange([Question(new, b"echo 2\n", 5)], _lines())
            assert answer.value == b"2"
            group.drop_closed()  # an open bot stays watched
            assert new in group._watched


@trio_test
async def test_try_receive_line_takes_what_is_there_without_waiting():
    async with open_bot(procbot("scripted")) as bot:
        assert bot.try_receive_line() is None  # nothing yet
        assert bot.try_send(b"multi\n") == len(b"multi\n")
        with trio.fail_after(5):
            while (line := bot.try_receive_line()) is None:
                await trio.sleep(0.01)
        assert line == b"one"
        assert bot.try_receive_line() == b"two" and await bot.receive_line() == b"three"


# -- exception groups (trio >= 0.25 nurseries wrap errors of the block) ---------------------


def test_a_lone_error_is_unwrapped_with_its_context():
    cause = KeyError("cause")
    inner = ValueError("inner")
    inner.__context__ = cause
    with pytest.raises(ValueError) as info, lone_errors_unwrapped():
        raise ExceptionGroup("wrapper", [ExceptionGroup("nested", [inner])])
    assert info.value is inner and info.value.__context__ is cause
    with pytest.raises(ExceptionGroup) as many, lone_errors_unwrapped():
        raise ExceptionGroup("two", [ValueError(1), KeyError(2)])
    assert len(many.value.exceptions) == 2


@trio_test
async def test_an_error_in_the_bot_block_arrives_as_itself():
    with pytest.raises(ZeroDivisionError):
        async with open_bot(procbot("scripted")):
            1 / 0  # noqa: B018
