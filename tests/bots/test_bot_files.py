"""A bot's folder holds only what physically lives inside it, and reading it is bounded.

Every case is a real folder crafted in tmp_path (FIFOs, device nodes, sockets, links,
hard links, sparse files, deep and huge bot.toml) read by the real code: hashing,
discovery, the build copy, ``arena submit``'s copy and the cluster bundle share one
walker (arena.bots.files), so each rule is checked once here for all of them."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from proc_helpers import needs_strict

from arena.authoring.submit import submit_bot
from arena.bots.bundle import BundleError, bundle_bot, unpack_bundle
from arena.bots.files import MAX_DEPTH, MAX_ENTRIES, BotFilesError, copy_bot, hash_bot
from arena.bots.manifest import ManifestError, content_hash, discover_bots, find_bot
from arena.bots.prepare import BuildError, prepare_bot
from arena.errors import ArenaError
from arena.game.players import TimeSettings

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "example_bots"
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="device nodes are made by root")
SECRET = "the-arena-operators-secret-7f3a"


def good_bot(folder: Path, name: str | None = None) -> Path:
    """A bot folder as an author writes it: the example random bot."""
    shutil.copytree(EXAMPLES / "random", folder, ignore=shutil.ignore_patterns("__pycache__"))
    if name is not None:
        toml = (folder / "bot.toml").read_text().replace('name = "random"', f'name = "{name}"')
        (folder / "bot.toml").write_text(toml)
    return folder


def secret_file(tmp_path: Path) -> Path:
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET + "\n")
    return secret


def old_content_hash(path: Path) -> str:
    """The content hash as the arena computed it before the walker, for ordinary folders."""
    skip = {"__pycache__", ".git", ".hg", ".svn", "node_modules", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
    files = []
    for root, dirs, names in os.walk(path):
        dirs[:] = [d for d in dirs if d not in skip]
        files += [Path(root, f) for f in names if not f.endswith((".pyc", ".pyo"))]
    h = hashlib.sha256()
    for file in sorted(files):
        rel = file.relative_to(path).as_posix()
        h.update(f"{rel}\0{'x' if os.access(file, os.X_OK) else '-'}\0".encode())
        h.update(file.read_bytes() + b"\0")
    return h.hexdigest()[:16]


# -- each hostile thing in a bot folder: one line naming the file, nothing read -------------------

def _fifo(bot: Path, tmp: Path) -> None:
    os.mkfifo(bot / "pipe")


def _dev_zero_link(bot: Path, tmp: Path) -> None:
    (bot / "data.bin").symlink_to("/dev/zero")


def _dev_zero_relative_link(bot: Path, tmp: Path) -> None:
    (bot / "data.bin").symlink_to("../" * 40 + "dev/zero")


def _sparse_10_gb(bot: Path, tmp: Path) -> None:
    with open(bot / "weights.bin", "wb") as f:
        f.truncate(10 << 30)


def _link_loop(bot: Path, tmp: Path) -> None:
    (bot / "a").symlink_to("b")
    (bot / "b").symlink_to("a")


def _link_to_secret(bot: Path, tmp: Path) -> None:
    (bot / "notes.txt").symlink_to(os.path.relpath(secret_file(tmp), bot))


def _absolute_link_to_secret(bot: Path, tmp: Path) -> None:
    (bot / "notes.txt").symlink_to(secret_file(tmp))


def _link_to_sibling_bot(bot: Path, tmp: Path) -> None:
    good_bot(bot.parent / "sibling", "sibling")
    (bot / "other").symlink_to("../sibling")


def _link_out_through_a_link(bot: Path, tmp: Path) -> None:
    secret_file(tmp)
    (bot / "up").symlink_to(".")  # inside, but a path through it may climb out
    (bot / "notes.txt").symlink_to("up/../../secret.txt")


def _hard_link_to_secret(bot: Path, tmp: Path) -> None:
    os.link(secret_file(tmp), bot / "notes.txt")


def _device(bot: Path, tmp: Path) -> None:
    os.mknod(bot / "null", stat.S_IFCHR | 0o666, os.makedev(1, 3))


def _socket(bot: Path, tmp: Path) -> None:
    here = os.getcwd()
    os.chdir(bot)  # a socket's path is limited to ~100 bytes: bind it by its short relative name
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind("sock")
        sock.close()
    finally:
        os.chdir(here)


def _nested_folders(bot: Path, tmp: Path) -> None:
    deep = bot.joinpath(*["d"] * (MAX_DEPTH + 1))
    deep.mkdir(parents=True)


def _fifo_in_a_cache_folder(bot: Path, tmp: Path) -> None:
    (bot / "__pycache__").mkdir()
    os.mkfifo(bot / "__pycache__" / "bot.cpython-311.pyc")


HOSTILE: dict[str, tuple[Callable[[Path, Path], None], str]] = {
    "fifo": (_fifo, r"pipe is a FIFO"),
    "dev-zero-link": (_dev_zero_link, r"data\.bin is a link to '/dev/zero', an absolute path"),
    "dev-zero-relative-link": (_dev_zero_relative_link, r"data\.bin is a link to .*outside the bot's folder"),
    "sparse-10-gb": (_sparse_10_gb, r"weights\.bin is 10240 MiB, over the 64 MiB"),
    "link-loop": (_link_loop, r": a is a link to 'b', which leads nowhere"),
    "link-to-secret": (_link_to_secret, r"notes\.txt is a link to '(\.\./)+secret\.txt', outside the bot's folder"),
    "absolute-link-to-secret": (_absolute_link_to_secret, r"notes\.txt is a link to .*secret\.txt', an absolute path"),
    "link-to-sibling-bot": (_link_to_sibling_bot, r"other is a link to '\.\./sibling', outside the bot's folder"),
    "link-out-through-a-link": (_link_out_through_a_link, r"notes\.txt is a link to 'up/\.\./\.\./secret\.txt'"),
    "hard-link-to-secret": (_hard_link_to_secret, r"notes\.txt is a hard link with 1 of its 2 names outside"),
    "device": (_device, r"null is a character device"),
    "socket": (_socket, r"sock is a socket"),
    "nested-folders": (_nested_folders, rf"is nested more than {MAX_DEPTH} folders deep"),
    "fifo-in-a-cache-folder": (_fifo_in_a_cache_folder, r"__pycache__/bot\.cpython-311\.pyc is a FIFO"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_file_is_refused_naming_it_and_nothing_is_read(tmp_path: Path, case: str) -> None:
    if case == "device" and os.geteuid() != 0:
        pytest.skip("device nodes are made by root")
    make, says = HOSTILE[case]
    bot = good_bot(tmp_path / "bots" / "evil", "evil")
    make(bot, tmp_path)
    t0 = time.monotonic()
    with pytest.raises(ManifestError, match=says) as refused:
        find_bot(bot)
    assert time.monotonic() - t0 < 5  # nothing blocks, nothing big is read
    message = str(refused.value)
    assert "\n" not in message and str(bot) in message
    for use in (hash_bot, lambda p: copy_bot(p, tmp_path / "copy")):  # the same rule, the same words
        shutil.rmtree(tmp_path / "copy", ignore_errors=True)
        with pytest.raises(BotFilesError, match=says):
            use(bot)
    bots, errors = discover_bots(tmp_path / "bots")
    assert "evil" not in {b.name for b in bots}
    assert [msg for path, msg in errors if path.name == "evil"] == [message]


def test_hashing_a_folder_with_a_fifo_returns_at_once(tmp_path: Path) -> None:
    """Nothing opens the FIFO (which would wait for a writer forever)."""
    bot = good_bot(tmp_path / "piped")
    os.mkfifo(bot / "pipe")
    t0 = time.monotonic()
    with pytest.raises(BotFilesError, match="pipe is a FIFO"):
        content_hash(bot)
    assert time.monotonic() - t0 < 1


def test_100000_files_are_refused_after_the_cap(tmp_path: Path) -> None:
    bot = good_bot(tmp_path / "many")
    many = bot / "many"
    many.mkdir()
    for i in range(100_000):
        os.close(os.open(many / f"f{i}", os.O_CREAT | os.O_WRONLY, 0o644))
    t0 = time.monotonic()
    with pytest.raises(ManifestError, match=rf"holds more than {MAX_ENTRIES} files and folders"):
        find_bot(bot)
    assert time.monotonic() - t0 < 10


def test_files_adding_up_to_too_much_are_refused(tmp_path: Path) -> None:
    bot = good_bot(tmp_path / "fat")
    for i in range(5):  # 60 MiB each, under the per-file cap; 300 MiB in all
        with open(bot / f"part{i}.bin", "wb") as f:
            f.truncate(60 << 20)
    with pytest.raises(ManifestError, match=r"its files add up to more than 256 MiB \(at part4\.bin\)"):
        find_bot(bot)


# -- bot.toml: through the same reader, capped, and never too deep for tomllib ---------------------

def _toml(bot: Path, text: str) -> None:
    (bot / "bot.toml").write_text(text)


def test_a_bot_toml_nested_100000_deep_or_200_mb_is_refused_naming_it(tmp_path: Path) -> None:
    bot = good_bot(tmp_path / "deep")
    _toml(bot, 'name = "deep"\nrun = ["python3", "bot.py"]\nx = ' + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(ManifestError, match=r"deep: bot\.toml is over 64 KiB, the most it may be"):
        find_bot(bot)
    _toml(bot, 'name = "deep"\nrun = ["python3", "bot.py"]\nx = ' + "[" * 5_000 + "]" * 5_000 + "\n")
    with pytest.raises(ManifestError, match=r"bot\.toml: arrays or tables nested 5000 deep; at most 32"):
        find_bot(bot)
    _toml(bot, 'name = "deep"\nrun = ["python3", "bot.py"]\nx = ' + "{a = " * 2_000 + "1" + "}" * 2_000 + "\n")
    with pytest.raises(ManifestError, match=r"bot\.toml: arrays or tables nested 2000 deep"):
        find_bot(bot)
    # Brackets inside strings and comments are text, not nesting.
    _toml(bot, 'name = "deep"\nrun = ["python3", "bot.py"]\ndescription = "' + "[" * 500 + '" # ' + "{" * 500 + "\n")
    assert find_bot(bot).name == "deep"
    with open(bot / "bot.toml", "wb") as f:  # 200 MB: only its first 64 KiB and a byte are ever read
        f.write(b'name = "deep"\n')
        f.truncate(200_000_000)
    t0 = time.monotonic()
    with pytest.raises(ManifestError, match=r"bot\.toml is over 64 KiB"):
        find_bot(bot)
    assert time.monotonic() - t0 < 1


def test_a_bot_toml_that_is_a_fifo_a_link_or_not_utf8_is_refused_naming_it(tmp_path: Path) -> None:
    bot = good_bot(tmp_path / "odd")
    (bot / "bot.toml").unlink()
    os.mkfifo(bot / "bot.toml")
    with pytest.raises(ManifestError, match=r"odd: bot\.toml is a FIFO \(named pipe\): it must be a regular file"):
        find_bot(bot)
    (bot / "bot.toml").unlink()
    (bot / "bot.toml").symlink_to("/etc/passwd")
    with pytest.raises(ManifestError, match=r"bot\.toml is a link: it must be a regular file"):
        find_bot(bot)
    (bot / "bot.toml").unlink()
    (bot / "bot.toml").write_bytes(b'name = "\xff"\n')
    with pytest.raises(ManifestError, match=r"bot\.toml: not UTF-8 text \(byte 8\)"):
        find_bot(bot)


# -- what a bot folder may hold: relative links inside it, kept as links ---------------------------

def test_an_ordinary_folder_hashes_as_it_always_did(tmp_path: Path) -> None:
    bot = good_bot(tmp_path / "plain")
    for rel in ("a/x.py", "a-b/x.py", "a/b/c.txt", "z.txt", "__pycache__/m.pyc", "a/__pycache__/x.pyc", ".git/HEAD"):
        (bot / rel).parent.mkdir(parents=True, exist_ok=True)
        (bot / rel).write_text(rel)
    (bot / "run.sh").write_text("#!/bin/sh\n")
    (bot / "run.sh").chmod(0o755)
    assert content_hash(bot) == old_content_hash(bot)
    # A .pyc outside __pycache__ is importable without its source: it is part of the bot now.
    (bot / "a" / "old.pyc").write_text("a/old.pyc")
    assert content_hash(bot) != old_content_hash(bot)
    for name in ("greedy", "mcts", "js-greedy", "c-greedy"):
        assert content_hash(EXAMPLES / name) == old_content_hash(EXAMPLES / name)


def test_links_inside_the_folder_are_kept_as_links_by_every_copy(tmp_path: Path) -> None:
    bot = good_bot(tmp_path / "src" / "linked", "linked")
    (bot / "lib").mkdir()
    (bot / "lib" / "util.py").write_text("X = 1\n")
    (bot / "util.py").symlink_to("lib/util.py")
    (bot / "library").symlink_to("lib")
    (bot / "lib" / "again.py").symlink_to("../util.py")  # a link to a link, still inside
    manifest = find_bot(bot)
    # A link hashes as its target text: another target, another bot; not as the file it leads to.
    assert manifest.content_hash != old_content_hash(bot)
    copy = tmp_path / "copy"
    assert copy_bot(bot, copy) == manifest.content_hash
    assert os.readlink(copy / "util.py") == "lib/util.py" and os.readlink(copy / "library") == "lib"
    assert (copy / "util.py").read_text() == "X = 1\n"
    home = unpack_bundle(bundle_bot(manifest), "linked", manifest.content_hash, tmp_path / "cache")
    assert home.content_hash == manifest.content_hash and os.readlink(home.path / "library") == "lib"
    (bot / "util.py").unlink()
    (bot / "util.py").symlink_to("library/util.py")  # the same file, by another way
    assert content_hash(bot) != manifest.content_hash


def test_a_hard_link_is_accepted_when_all_its_names_are_inside(tmp_path: Path) -> None:
    bot = good_bot(tmp_path / "twins")
    os.link(bot / "bot.py", bot / "copy_of_bot.py")
    assert find_bot(bot).name == "random"
    copy = tmp_path / "copy"
    copy_bot(bot, copy)
    assert os.stat(copy / "copy_of_bot.py").st_nlink == 1  # the copy holds files of its own


def test_a_file_name_that_is_not_utf8_is_hashed_not_a_traceback(tmp_path: Path) -> None:
    bot = good_bot(tmp_path / "bytes")
    (bot / os.fsdecode(b"caf\xe9.txt")).write_text("x")
    assert len(content_hash(bot)) == 16


# -- single-file bots and the entries of a bots folder ----------------------------------------------

def test_entries_of_a_bots_folder_that_are_fifos_devices_or_links_to_them_skip_only_themselves(tmp_path: Path) -> None:
    bots = tmp_path / "bots"
    good_bot(bots / "random")
    os.mkfifo(bots / "pipe.py")
    (bots / "zero.py").symlink_to("/dev/zero")
    (bots / "loop.py").symlink_to("loop.py")
    os.link(secret_file(tmp_path), bots / "leak.py")
    t0 = time.monotonic()
    found, errors = discover_bots(bots)
    assert time.monotonic() - t0 < 5
    assert [b.name for b in found] == ["random"]
    reasons = {p.name: msg for p, msg in errors}
    assert set(reasons) == {"pipe.py", "zero.py", "loop.py", "leak.py"}
    assert "not a bot: a bot is a folder or a regular file, not a FIFO" in reasons["pipe.py"]
    assert "/dev/zero: not a bot: a bot is a folder or a regular file" in reasons["zero.py"]
    assert "loop.py: cannot be read" in reasons["loop.py"]
    assert "leak.py is a hard link" in reasons["leak.py"]


# -- names that look alike ---------------------------------------------------------------------------

def test_a_name_confusable_with_one_in_the_folder_is_skipped_naming_the_first(tmp_path: Path) -> None:
    bots = tmp_path / "bots"
    good_bot(bots / "a-greedy", "greedy")
    good_bot(bots / "b-greedy", "Greedy")
    good_bot(bots / "c-bot1", "bot1")
    good_bot(bots / "d-botl", "botI")
    good_bot(bots / "e-cyrillic", "gr\u0435\u0435dy")  # Cyrillic е twice
    good_bot(bots / "f-rn", "corn")
    good_bot(bots / "g-m", "com")
    found, errors = discover_bots(bots)
    assert sorted(b.name for b in found) == ["bot1", "corn", "greedy"]
    reasons = {p.name: msg for p, msg in errors}
    assert "bot name 'Greedy' is too like 'greedy'" in reasons["b-greedy"] and str(bots / "a-greedy") in reasons["b-greedy"]
    assert "bot name 'botI' is too like 'bot1'" in reasons["d-botl"]
    assert "bot name 'com' is too like 'corn'" in reasons["g-m"]
    cyr = reasons["e-cyrillic"]
    assert "must be 1 to 64 ASCII letters" in cyr and "CYRILLIC SMALL LETTER IE" in cyr and "looks like 'greedy'" in cyr


def test_submit_refuses_a_name_too_like_a_taken_one_naming_it(tmp_path: Path) -> None:
    bots = tmp_path / "bots"
    good_bot(bots / "greedy", "greedy")
    mine = good_bot(tmp_path / "mine", "GREEDY")
    fast = TimeSettings(turn_ms=300, bank_ms=600, hello_ms=5000)
    with pytest.raises(ArenaError, match=r"bot name 'GREEDY' is too like 'greedy', already taken in .*bots"):
        submit_bot(mine, bots, fast, build_cache=tmp_path / "build")
    assert sorted(p.name for p in bots.iterdir()) == ["greedy"]


def test_submit_refuses_a_bot_with_a_link_outside_and_copies_nothing(tmp_path: Path) -> None:
    mine = good_bot(tmp_path / "mine", "mine")
    _link_to_secret(mine, tmp_path)
    bots = tmp_path / "bots"
    fast = TimeSettings(turn_ms=300, bank_ms=600, hello_ms=5000)
    with pytest.raises(ArenaError, match=r"notes\.txt is a link to '\.\./secret\.txt', outside the bot's folder"):
        submit_bot(mine, bots, fast, build_cache=tmp_path / "build")
    assert not bots.exists() or list(bots.iterdir()) == []


# -- the build copy ----------------------------------------------------------------------------------

def test_the_build_copy_keeps_inside_links_and_refuses_files_changed_since_hashing(tmp_path: Path) -> None:
    bot = good_bot(tmp_path / "builder", "builder")
    (bot / "bot.toml").write_text('name = "builder"\nrun = ["{python}", "main.py"]\nbuild = ["true"]\n')
    (bot / "main.py").symlink_to("bot.py")
    spec = prepare_bot(find_bot(bot), tmp_path / "cache")
    assert os.readlink(spec.cwd / "main.py") == "bot.py" and (spec.cwd / "main.py").read_text() == (bot / "bot.py").read_text()
    manifest = find_bot(bot)
    (bot / "extra.py").write_text("# arrived after the bot was read\n")
    with pytest.raises(BuildError, match=r"bot builder: its files changed since they were read"):
        prepare_bot(manifest, tmp_path / "cache2")
    os.mkfifo(bot / "pipe")
    with pytest.raises(BuildError, match=r"cannot copy its files to build them: .*pipe is a FIFO"):
        prepare_bot(manifest, tmp_path / "cache3")


# -- bundles: unpacking is hostile input too ----------------------------------------------------------

def _tar(members: list[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return gzip.compress(raw.getvalue())


def _member(name: str, kind: bytes = tarfile.REGTYPE, linkname: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, linkname, 0o644
    return info


BAD_BUNDLES: dict[str, tuple[list[tuple[tarfile.TarInfo, bytes | None]], str]] = {
    "link-outside": ([(_member("b/x", tarfile.SYMTYPE, "../../etc/passwd"), None)], "a link to '../../etc/passwd' that does not stay inside"),
    "absolute-link": ([(_member("b/x", tarfile.SYMTYPE, "/etc/passwd"), None)], "a link to '/etc/passwd'"),
    "hard-link": ([(_member("b/y"), b"1"), (_member("b/x", tarfile.LNKTYPE, "b/y"), None)],
                  "'b/x', which is not a folder, a regular file or a link"),
    "fifo": ([(_member("b/p", tarfile.FIFOTYPE), None)], "'b/p', which is not a folder, a regular file or a link"),
    "device": ([(_member("b/d", tarfile.CHRTYPE), None)], "'b/d', which is not a folder"),
    "through-a-link": ([(_member("b/l", tarfile.SYMTYPE, "sub"), None), (_member("b/l/x"), b"1")], "'b/l/x', inside a link"),
    "twice": ([(_member("b/x"), b"1"), (_member("b/x"), b"2")], "'b/x' twice"),
    "dot-dot": ([(_member("b/../x"), b"1")], "not a plain relative file"),
    "two-tops": ([(_member("b/x"), b"1"), (_member("c/x"), b"1")], "more than one top-level entry"),
}


@pytest.mark.parametrize("case", sorted(BAD_BUNDLES))
def test_a_hostile_bundle_is_refused_and_nothing_is_left(tmp_path: Path, case: str) -> None:
    members, says = BAD_BUNDLES[case]
    cache = tmp_path / "cache"
    with pytest.raises(BundleError, match=says.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        unpack_bundle(_tar(members), "b", "0" * 16, cache)
    assert list(cache.iterdir()) == []


def test_a_bundle_with_a_huge_member_header_or_too_many_members_is_refused_before_reading_them(tmp_path: Path) -> None:
    header = _member("b/big")
    header.size = 10 << 30  # the header alone: refused before a byte of it is read
    raw = header.tobuf(tarfile.PAX_FORMAT)
    with pytest.raises(BundleError, match=r"'b/big', of 10737418240 bytes: over the 64 MiB"):
        unpack_bundle(gzip.compress(raw), "b", "0" * 16, tmp_path / "cache")
    header = _member("b/x")
    header.pax_headers = {"comment": "x" * (1 << 20)}  # read whole by tarfile, so capped before
    with pytest.raises(BundleError, match=r"an extended header of \d+ bytes \(at most 65536\)"):
        unpack_bundle(_tar([(header, b"1")]), "b", "0" * 16, tmp_path / "cache1")
    many = [(_member(f"b/f{i}"), b"") for i in range(MAX_ENTRIES + 2)]
    with pytest.raises(BundleError, match=rf"more than {MAX_ENTRIES} members"):
        unpack_bundle(_tar(many), "b", "0" * 16, tmp_path / "cache2")


# -- a whole run: the hostile folders skip only themselves -------------------------------------------

def _run(bots: Path, results: Path, *extra: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "run", "--bots", str(bots), "--results", str(results),
         "--players", "2", "--games", "2", "--time-scale", "0.5", "--json", *extra],
        cwd=ROOT, capture_output=True, text=True, timeout=240, env={**os.environ, "COLUMNS": "500"},
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return json.loads(proc.stdout)


def _hostile_bots_folder(tmp_path: Path) -> Path:
    bots = tmp_path / "bots"
    shutil.copytree(EXAMPLES / "greedy", bots / "greedy", ignore=shutil.ignore_patterns("__pycache__"))
    good_bot(bots / "random")
    for name, make in (("piped", _fifo), ("zeroed", _dev_zero_link), ("looped", _link_loop), ("leaky", _link_to_secret)):
        make(good_bot(bots / name, name), tmp_path)
    os.mkfifo(bots / "pipe.py")
    return bots


def test_a_real_run_with_hostile_folders_beside_good_bots_finishes_naming_each(tmp_path: Path) -> None:
    doc = _run(_hostile_bots_folder(tmp_path), tmp_path / "res", "--sandbox", "none")
    assert {r["bot"] for r in doc["rows"]} == {"greedy", "random"}
    skipped = {s["bot"]: s["reason"] for s in doc["skipped"]}
    assert "pipe is a FIFO" in skipped["piped"]
    assert "data.bin is a link to '/dev/zero'" in skipped["zeroed"]
    assert "a is a link to 'b', which leads nowhere" in skipped["looped"]
    assert re.search(r"leaky: notes\.txt is a link to '(\.\./)+secret\.txt', outside the bot's folder", skipped["leaky"])
    assert "not a FIFO" in skipped["pipe"]


@needs_strict
def test_under_strict_a_bot_cannot_read_a_secret_through_a_link_or_hard_link(tmp_path: Path) -> None:
    """The leaking bots would print the secret as their hello name; they are skipped before
    they start, the secret is nowhere in the results, and a bot whose inside link is kept
    plays under strict."""
    bots = tmp_path / "bots"
    good_bot(bots / "random")
    leak = (
        "import json, sys\nsecret = open('notes.txt').read().strip()\n"
        "sys.stderr.write(secret + '\\n')\nhello = json.loads(sys.stdin.readline())\n"
        "print(json.dumps({'type': 'hello', 're': hello['id'], 'version': 1, 'name': secret}), flush=True)\n"
    )
    for name, make in (("linker", _link_to_secret), ("hardlinker", _hard_link_to_secret)):
        bot = bots / name
        bot.mkdir(parents=True)
        (bot / "main.py").write_text(leak)
        make(bot, tmp_path)
    linked = good_bot(bots / "linked", "linked")
    (linked / "src").mkdir()
    (linked / "bot.py").rename(linked / "src" / "bot.py")
    (linked / "bot.py").symlink_to("src/bot.py")
    doc = _run(bots, tmp_path / "res", "--sandbox", "strict")
    assert {r["bot"] for r in doc["rows"]} == {"random", "linked"}
    skipped = {s["bot"]: s["reason"] for s in doc["skipped"]}
    assert re.search(r"linker: notes\.txt is a link to '(\.\./)+secret\.txt', outside the bot's folder", skipped["linker"])
    assert "notes.txt is a hard link with 1 of its 2 names outside" in skipped["hardlinker"]
    for file in (tmp_path / "res").rglob("*"):
        if file.is_file():
            data = file.read_bytes()
            assert SECRET.encode() not in (gzip.decompress(data) if file.suffix == ".gz" else data), file
