"""`arena new NAME --lang LANG`: every starter bot is written, passes `arena validate` in
the default sandbox (strict where the machine has it), plays a tournament, and survives
hostile input (an over-long line, a line that is not JSON, an unknown message type).

The starters are real programs built with real toolchains, run as real processes. A
language whose toolchain is not installed is skipped, and the skip says which tool is
missing (pytest prints skip reasons: `-ra` is in the project's pytest options).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.authoring.starters import LANGUAGES, TOOLCHAINS
from arena.bots.manifest import load_manifest
from arena.bots.strict import resolve_level
from arena.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
# Subprocesses import this checkout's arena (not another installed copy).
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
MAX_LINE_BYTES = 1 << 20  # what every starter's README promises its reader takes

runner = CliRunner()


def arena(*args: str, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena", *args], cwd=cwd, env=ENV, capture_output=True, text=True, timeout=timeout
    )


def need_toolchain(lang: str) -> None:
    missing = [tool for tool in TOOLCHAINS[lang] if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{lang} starter not tested: {', '.join(missing)} not installed")


def new_bot(lang: str, parent: Path, name: str | None = None) -> Path:
    name = name or f"{lang}-starter"
    result = runner.invoke(app, ["new", name, "--lang", lang, "--dir", str(parent)])
    assert result.exit_code == 0, result.output
    return parent / name


# ---- what `arena new` writes ----------------------------------------------------------

DEPENDENCY_WORDS = {  # how each README says to bring dependencies without network
    "python": ["--no-index", "--find-links", "wheelhouse"],
    "js": ["node_modules"],
    "c": ["third_party"],
    "java": ["lib/*", "jars"],
    "rust": ["cargo vendor", ".cargo/config.toml", "--offline"],
    "go": ["go mod vendor", "vendor/"],
}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_new_writes_a_manifest_the_source_and_a_readme(lang: str, tmp_path: Path) -> None:
    folder = new_bot(lang, tmp_path, "my.bot+1")
    manifest = load_manifest(folder)
    assert manifest.name == "my.bot+1"
    assert manifest.run
    files = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    assert "bot.toml" in files and "README.md" in files and len(files) >= 3
    assert not any(f.endswith(".tmpl") for f in files)
    for file in files:  # every placeholder was filled in
        assert not re.search(r"\{\{(name|crate|module)\}\}", (folder / file).read_text(encoding="utf-8")), file
    readme = (folder / "README.md").read_text(encoding="utf-8")
    assert "arena validate my.bot+1" in readme and "arena run --bots" in readme
    assert "1 MiB" in readme  # its reader's line-length limit
    for words in DEPENDENCY_WORDS[lang]:
        assert words in readme, words
    assert "my.bot+1" in "".join((folder / f).read_text(encoding="utf-8") for f in files if f != "README.md")


def test_python_and_js_starters_use_only_what_ships_with_the_language(tmp_path: Path) -> None:
    python = (new_bot("python", tmp_path) / "bot.py").read_text(encoding="utf-8")
    assert set(re.findall(r"^import (\w+)", python, re.M)) == {"json", "random", "sys"}
    assert not re.findall(r"^from ", python, re.M)  # no SDK, no package of the arena's
    js = (new_bot("js", tmp_path) / "bot.js").read_text(encoding="utf-8")
    assert re.findall(r"require\(", js) == []  # process and Buffer are Node's globals


def test_new_prints_the_next_commands_and_json_for_scripts(tmp_path: Path) -> None:
    proc = arena("new", "alpha", "--lang", "python", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "arena validate alpha" in proc.stdout and "arena submit alpha --bots bots" in proc.stdout
    assert "arena run --bots bots" in proc.stdout
    assert not any(line != line.rstrip() for line in proc.stdout.splitlines())
    proc = arena("new", "beta", "--lang", "c", "--dir", "sub/deeper", "--json", cwd=tmp_path)
    assert proc.returncode == 1 and "sub/deeper: does not exist, nor does its parent" in proc.stderr
    assert not (tmp_path / "sub").exists()
    proc = arena("new", "beta", "--lang", "c", "--dir", "sub", "--json", cwd=tmp_path)  # one level is made
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["name"] == "beta" and data["lang"] == "c" and data["path"] == "sub/beta"
    assert sorted(data["files"]) == ["README.md", "bot.toml", "main.c"]


# ---- refusals --------------------------------------------------------------------------


def test_new_refuses_an_existing_folder_and_touches_nothing(tmp_path: Path) -> None:
    mine = tmp_path / "mybot"
    mine.mkdir()
    (mine / "bot.py").write_text("my own work\n")
    proc = arena("new", "mybot", "--lang", "python", cwd=tmp_path)
    assert proc.returncode == 1
    assert "mybot: already exists" in proc.stderr and "Traceback" not in proc.stderr
    assert [p.name for p in mine.iterdir()] == ["bot.py"]
    assert (mine / "bot.py").read_text() == "my own work\n"
    (tmp_path / "afile").write_text("x")  # a file of that name is refused the same way
    proc = arena("new", "afile", "--lang", "go", cwd=tmp_path)
    assert proc.returncode == 1 and "afile: already exists" in proc.stderr
    assert (tmp_path / "afile").read_text() == "x"


@pytest.mark.parametrize("name", ["bad name", "-dash", ".hidden", "x" * 65, "caf\u00e9", "a/b", ""])
def test_new_refuses_a_name_that_bot_toml_would_refuse(name: str, tmp_path: Path) -> None:
    proc = arena("new", "--lang", "python", "--", name, cwd=tmp_path)  # "--": "-dash" is not an option
    assert proc.returncode == 1, proc.stdout
    assert "a bot's name must be 1 to 64 ASCII letters" in proc.stderr and "Traceback" not in proc.stderr
    assert list(tmp_path.iterdir()) == []
    if "/" in name:
        assert "--dir" in proc.stderr


def test_new_refuses_a_bad_lang_naming_the_flag_and_the_choices(tmp_path: Path) -> None:
    proc = arena("new", "mybot", "--lang", "cobol", cwd=tmp_path)
    assert proc.returncode == 2
    text = " ".join(re.sub(r"[│╭╮╰╯─]", " ", proc.stderr).split())
    assert "'--lang'" in text and "cobol" in text
    for lang in LANGUAGES:
        assert f"'{lang}'" in text
    assert list(tmp_path.iterdir()) == []
    proc = arena("new", "mybot", cwd=tmp_path)  # --lang is required
    assert proc.returncode == 2 and "--lang" in proc.stderr


# ---- each starter passes `arena validate` ----------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("lang", LANGUAGES)
def test_starter_passes_validate_in_the_default_sandbox(lang: str, tmp_path: Path) -> None:
    need_toolchain(lang)
    level, _ = resolve_level(None)  # what `arena validate` uses without --sandbox
    print(f"{lang}: validated at sandbox level {level.value}")
    folder = new_bot(lang, tmp_path)
    proc = arena("validate", folder.name, "--json", cwd=tmp_path)
    report = json.loads(proc.stdout) if proc.stdout.startswith("{") else None
    failed = [c for c in (report or {}).get("checks", []) if not c["passed"]]
    assert proc.returncode == 0 and report and report["passed"], f"{failed or proc.stdout}\n{proc.stderr}"
    names = [c["name"] for c in report["checks"]]
    assert "dummy: controller turn" in names and "chopsticks offered" in names


@pytest.mark.slow
def test_starters_play_a_tournament_without_a_fault(tmp_path: Path) -> None:
    bots = tmp_path / "bots"
    bots.mkdir()
    langs = []
    for lang in LANGUAGES:
        if all(shutil.which(tool) for tool in TOOLCHAINS[lang]):
            new_bot(lang, bots)
            langs.append(lang)
        else:
            print(f"{lang} starter left out: {', '.join(TOOLCHAINS[lang])} not all installed")
    proc = arena("run", "--bots", str(bots), "--results", str(tmp_path / "results"), "--players", "3", "--games", "6", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    board = json.loads((tmp_path / "results" / "leaderboard.json").read_text())
    assert board["skipped"] == [], board["skipped"]
    rows = {row["bot"]: row for row in board["rows"]}
    assert set(rows) == {f"{lang}-starter" for lang in langs}
    for name, row in rows.items():
        assert row["games"] > 0 and row["faults"] == {}, (name, row)


# ---- each starter survives hostile input -----------------------------------------------


def build_outside_the_arena(lang: str, folder: Path) -> list[str]:
    """Build the starter as its bot.toml says, in its folder; return the argv that runs it."""
    manifest = load_manifest(folder)
    if manifest.build:
        built = subprocess.run(list(manifest.build), cwd=folder, capture_output=True, text=True, timeout=600)
        assert built.returncode == 0, built.stdout + built.stderr
    return [sys.executable if arg == "{python}" else arg for arg in manifest.run]


class Bot:
    """A starter running as a plain process: lines in, lines out, stderr kept."""

    def __init__(self, argv: list[str], folder: Path) -> None:
        self.proc = subprocess.Popen(
            argv, cwd=folder, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.lines: list[bytes] = []
        self._stderr = b""
        self._ready = threading.Condition()
        threading.Thread(target=self._read_out, daemon=True).start()
        self._err_reader = threading.Thread(target=self._read_err, daemon=True)
        self._err_reader.start()

    @property
    def stderr(self) -> bytes:
        """All the bot wrote to stderr: asked once it has exited, after the reader has
        drained the pipe (the process can end before the reader thread has read it all)."""
        self._err_reader.join(timeout=20)
        return self._stderr

    def _read_out(self) -> None:
        for line in self.proc.stdout:  # type: ignore[union-attr]
            with self._ready:
                self.lines.append(line)
                self._ready.notify_all()

    def _read_err(self) -> None:
        self._stderr = self.proc.stderr.read()  # type: ignore[union-attr]

    def send(self, data: bytes) -> None:
        self.proc.stdin.write(data)  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]

    def reply(self, timeout: float = 20) -> dict:
        with self._ready:
            assert self._ready.wait_for(lambda: self.lines, timeout), "no reply"
            return json.loads(self.lines.pop(0))


HELLO = {"type": "hello", "id": 1, "protocol": "sushigo-bot", "versions": [1], "rules_version": "sushigo-rules/1.0",
         "arena_version": "0", "limits": {"max_line_bytes": 65536, "hello_ms": 10000, "turn_ms": 1000, "bank_ms": 10000}}
GAME_START = {"type": "game_start", "id": 2, "game_id": "g", "seat": 0, "players": 2, "seats": 3,
              "names": ["a", "b", "dummy"], "rules": {"variant": "dummy", "hand_size": 9, "rounds": 3}, "time": {},
              "seed": 2**63 - 1}
ACT = {"type": "act", "id": 3, "game_id": "g", "seat": 0, "round": 1, "turn": 1, "direction": "left", "time_ms": 2000,
       "hand": [{"id": 5, "card": "tempura"}, {"id": 9, "card": "wasabi"}, {"id": 70, "card": "chopsticks"}],
       "legal": [{"cards": [5], "dummy_card": 9}, {"cards": [9], "dummy_card": 5}, {"cards": [5, 9], "dummy_card": 70}],
       "dummy": True, "controller": 0, "tableaus": [[], [], []], "puddings": [0, 0, 0], "scores": [0, 0, 0],
       "hand_sizes": [3, 3, 9], "banks_ms": [0, 0, 0], "extra": {"a later field": [1, {"deep": None}]},
       "last_action": {"status": "illegal", "cards": [1], "dummy_card": None, "message": "a test fault", "elapsed_ms": 1.5},
       "events": [{"type": "round_start", "round": 1, "direction": "left", "hand_size": 9},
                  {"type": "round_end", "round": 1, "points": [1, 2, 0], "maki_symbols": [0, 0, 0],
                   "maki_points": [0, 0, 0], "scores": [1, 2, 0]}]}


def line(message: dict) -> bytes:
    return json.dumps(message).encode() + b"\n"


@pytest.fixture(scope="module")
def starters(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[list[str], Path]]:
    """Every starter whose toolchain is here, built once: (argv, folder)."""
    parent = tmp_path_factory.mktemp("starters")
    built = {}
    for lang in LANGUAGES:
        if all(shutil.which(tool) for tool in TOOLCHAINS[lang]):
            folder = new_bot(lang, parent)
            built[lang] = (build_outside_the_arena(lang, folder), folder)
    return built


def started(lang: str, starters: dict[str, tuple[list[str], Path]]) -> Bot:
    need_toolchain(lang)
    argv, folder = starters[lang]
    return Bot(argv, folder)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_starter_skips_an_over_long_line_and_a_line_that_is_not_json(lang: str, starters: dict) -> None:
    bot = started(lang, starters)
    bot.send(b"{" + b"x" * (3 * MAX_LINE_BYTES) + b"\n")  # over its reader's limit, in pieces
    bot.send(b"not json at all\n")
    bot.send(b"[1, 2, 3]\n")
    bot.send(b"\n")
    bot.send(b'{"type": "news_of_v2", "id": 7, "what": [1, 2]}\n')  # an unknown type: logged, not answered
    bot.send(line(HELLO))
    hello = bot.reply()
    assert hello == {"type": "hello", "re": 1, "version": 1, "name": f"{lang}-starter", "bot_version": "1"}
    bot.send(line(GAME_START))
    assert bot.reply() == {"type": "ready", "re": 2}
    bot.send(line({"type": "shutdown", "id": 4, "reason": ""}))
    assert bot.proc.wait(timeout=20) == 0
    assert bot.lines == []  # nothing but the two answers
    stderr = bot.stderr.decode(errors="replace")
    assert re.search(r"skipped a line of 31457\d\d bytes", stderr), stderr
    assert "unknown type" in stderr and "news_of_v2" in stderr


@pytest.mark.parametrize("lang", LANGUAGES)
def test_starter_answers_a_dummy_act_with_a_legal_entry_and_logs_the_fault(lang: str, starters: dict) -> None:
    bot = started(lang, starters)
    for message in (HELLO, GAME_START, ACT):
        bot.send(line(message))
    bot.reply(), bot.reply()
    action = bot.reply()
    assert action["type"] == "action" and action["re"] == 3
    assert {k: v for k, v in action.items() if k not in ("type", "re")} in ACT["legal"]
    bot.send(line({"type": "game_over", "id": 4, "game_id": "g", "scores": [1, 2, 0], "puddings": [0, 0, 0],
                   "ranks": [2, 1, 3], "faults": {}, "reason": "complete", "last_action": None, "events": []}))
    assert bot.reply() == {"type": "ack", "re": 4}
    bot.proc.stdin.close()  # type: ignore[union-attr]  # the end of input: it exits by itself
    assert bot.proc.wait(timeout=20) == 0
    assert "a test fault" in bot.stderr.decode(errors="replace")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_starter_plays_the_same_game_the_same_way(lang: str, starters: dict) -> None:
    """Seeded by game_start: two processes given the same requests answer the same."""
    answers = []
    for _ in range(2):
        bot = started(lang, starters)
        for message in (HELLO, GAME_START, *({**ACT, "id": 3 + i, "last_action": None} for i in range(8))):
            bot.send(line(message))
        answers.append([bot.reply() for _ in range(10)])
        bot.send(line({"type": "shutdown", "id": 20, "reason": ""}))
        assert bot.proc.wait(timeout=20) == 0
    assert answers[0] == answers[1]


# ---- packaging -------------------------------------------------------------------------


def test_an_installed_arena_writes_every_starter(tmp_path: Path) -> None:
    """The templates are package data: setuptools' build (what a wheel or an install
    holds) carries every one of them, and `arena new` run from that build writes each
    language's starter as it does from the source tree."""
    templates = ROOT / "arena" / "authoring" / "starters" / "templates"
    expected = {p.relative_to(ROOT).as_posix() for p in templates.rglob("*.tmpl")}
    assert {f.split("/")[4] for f in expected} == set(LANGUAGES)
    src, lib = tmp_path / "src", tmp_path / "lib"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".git", "results", "__pycache__", "*.egg-info", "build"))
    proc = subprocess.run(
        [sys.executable, "-c", "import setuptools; setuptools.setup()", "-q", "build_py", "--build-lib", str(lib)],
        cwd=src, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    built = {p.relative_to(lib).as_posix() for p in lib.rglob("*.tmpl")}
    assert built == expected
    shutil.rmtree(src)  # nothing of the source tree is left to read from
    for lang in LANGUAGES:
        made = subprocess.run(
            [sys.executable, "-m", "arena", "new", f"b-{lang}", "--lang", lang], cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(lib)}, capture_output=True, text=True, timeout=60,
        )
        assert made.returncode == 0, made.stderr
        assert (tmp_path / f"b-{lang}" / "bot.toml").is_file()
