"""The plain lines of the commands on one game's files, byte for byte, as a script that pipes
them sees them: which line goes to stdout and which to stderr, with no colour codes.
`arena store key import` and `export`, `arena play`'s replay line, and `arena verify`'s line
per file and verdict, outside a results folder and in one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

TESTBOT = str(Path(__file__).resolve().parents[1] / "data" / "bots" / "testbot.py")
KEY = "00112233445566778899aabbccddeeff" * 2
NOT_JSON = "not a replay: not JSON (JSON is malformed: invalid character (byte 0))"


def arena(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena", *args], cwd=cwd, capture_output=True, text=True, timeout=120,
    )


def test_the_deal_key_lines_when_piped(tmp_path: Path) -> None:
    imported = arena(tmp_path, "store", "key", "import", KEY, "results")
    assert (imported.returncode, imported.stdout, imported.stderr) == (0, "", "deal key imported into results/arena.db\n")
    exported = arena(tmp_path, "store", "key", "export", "results")
    assert (exported.returncode, exported.stdout, exported.stderr) == (0, KEY + "\n", "")


def test_play_then_verify_print_their_lines_where_a_script_expects_them(tmp_path: Path) -> None:
    assert arena(tmp_path, "store", "key", "import", KEY, "results").returncode == 0
    played = arena(tmp_path, "play", TESTBOT, TESTBOT, "--seed", "3", "--replay", "p/g.json.gz")
    assert played.returncode == 0, played.stderr
    # The replay's line is the last of stderr, whatever the machine noted before it (a sandbox note).
    assert played.stderr.splitlines()[-1] == "replay: p/g.json.gz" and "\x1b[" not in played.stdout + played.stderr
    assert played.stdout.startswith("Game ") and "rank" in played.stdout

    ok = arena(tmp_path, "verify", "p")
    assert (ok.returncode, ok.stdout) == (0, "✓ p/g.json.gz\n✓ 1 replay(s) verified: every game re-simulates exactly\n")
    assert ok.stderr == "(not in a results folder: seats, versions and hashes not checked against a store)\n"

    (tmp_path / "p" / "stray.json.gz").write_bytes(b"junk")
    bad = arena(tmp_path, "verify", "p")
    assert (bad.returncode, bad.stdout) == (1, "✓ p/g.json.gz\n")
    assert bad.stderr == (
        f"✗ p/stray.json.gz: {NOT_JSON}\n"
        "2 files checked: 1 file is not a readable replay; the other 1 replay(s) verified: every game re-simulates exactly\n"
        "(not in a results folder: seats, versions and hashes not checked against a store)\n"
    )
    as_json = arena(tmp_path, "verify", "p", "--json")
    assert as_json.returncode == 1 and as_json.stderr == ""
    assert json.loads(as_json.stdout) == {
        "checked": 2, "failed": 1,
        "failures": [{"file": "p/stray.json.gz", "error": f"p/stray.json.gz: {NOT_JSON}", "kind": "unreadable"}],
        "files": [{"file": "p/g.json.gz", "status": "ok"},
                  {"file": "p/stray.json.gz", "status": "unreadable", "error": f"p/stray.json.gz: {NOT_JSON}"}],
    }

    # In a results folder, a replay with no row in its store is verified with a note saying so.
    (tmp_path / "p" / "stray.json.gz").rename(tmp_path / "stray")
    (tmp_path / "p" / "g.json.gz").rename(tmp_path / "results" / "g.json.gz")
    stored = arena(tmp_path, "verify", "results")
    assert (stored.returncode, stored.stderr) == (0, "")
    assert stored.stdout == (
        "✓ results/g.json.gz (no row in the store (a game a killed run left))\n"
        "✓ 1 replay(s) verified: every game re-simulates exactly\n"
    )
