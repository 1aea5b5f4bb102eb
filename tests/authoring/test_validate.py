"""`arena validate` and `arena submit` with real bot processes: every example bot passes,
and each purpose-broken bot (tests/data/validate_bots/_broken.py) fails the check that covers its
fault, with a message that says what was sent, what came back and where to read more."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

import arena.authoring.submit as submit_module
from arena.authoring.checks import SECTIONS, ValidationReport
from arena.authoring.situations import scripts
from arena.authoring.submit import submit_bot
from arena.authoring.validate import validate_bot
from arena.bots.manifest import content_hash
from arena.bots.sandbox import SandboxSettings
from arena.bots.strict import resolve_level
from arena.cli.app import app
from arena.errors import ArenaError
from arena.game.players import TimeSettings

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "example_bots"
BROKEN = Path(__file__).parents[1] / "data" / "validate_bots"
TOURNAMENT = TimeSettings()  # the default budgets, as a tournament runs them

#: Every check a report carries once the bot has been found (plus "build" for a bot with a build step).
CHECK_NAMES = [
    "bot found", "hello",
    "2 players, standard", "3 players, alternate", "4 players, standard", "5 players, alternate", "2 players, dummy variant",
    "chopsticks offered", "wasabi before nigiri", "chopsticks returned", "last card of a round",
    "dummy: controller turn", "dummy: other player's turn", "fault in last_action", "time",
]


def broken_bot(fault: str, where: Path) -> Path:
    """The purpose-broken bot ``fault`` as one file ``where/<fault>.py``: _broken.py, then
    ``main(fault)`` (a single-file bot runs from a copy of its own file: it imports no module beside it)."""
    bot = where / f"{fault}.py"
    where.mkdir(parents=True, exist_ok=True)
    bot.write_text((BROKEN / "_broken.py").read_text(encoding="utf-8") + f"\n\nmain({fault!r})\n", encoding="utf-8")
    return bot


def run_validate(path: Path, tmp_path: Path, ts: TimeSettings = TOURNAMENT) -> ValidationReport:
    return validate_bot(path, ts, build_cache=tmp_path / "build")


def check(report: ValidationReport, name: str):  # noqa: ANN201
    return next(c for c in report.checks if c.name == name)


def failures(report: ValidationReport) -> str:
    return "\n".join(f"{c.name}: {c.message}" for c in report.failed)


def example_bots() -> list[str]:
    names = ["minimal", "random", "greedy", "js-greedy", "c-greedy"]
    if (EXAMPLES / "mcts" / "bot.toml").is_file():
        names.append("mcts")
    return names


def deterministic_copy(name: str, where: Path) -> Path:
    """The bot itself, or for mcts a copy set to its deterministic, iteration-capped mode
    (a fixed number of playouts instead of thinking by the clock: fast and repeatable)."""
    folder = EXAMPLES / name
    manifest = tomllib.loads((folder / "bot.toml").read_text(encoding="utf-8"))
    if name != "mcts" or "env" in manifest:
        return folder
    copy = where / name
    shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("__pycache__"))
    with (copy / "bot.toml").open("a", encoding="utf-8") as f:
        f.write('env = { MCTS_ITERATIONS = "100" }\n')
    return copy


# -- every example bot passes ------------------------------------------------------------


@pytest.mark.parametrize("name", example_bots())
def test_every_example_bot_passes_every_check(name: str, tmp_path: Path) -> None:
    manifest = tomllib.loads((EXAMPLES / name / "bot.toml").read_text(encoding="utf-8"))
    for tool in (manifest["run"][0], *(manifest.get("build") or [])[:1]):
        if tool in ("node", "cc") and shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")
    # In the strict sandbox where the machine has it (as a tournament runs them), else at limits.
    level, _ = resolve_level(None)
    report = validate_bot(
        deterministic_copy(name, tmp_path), TOURNAMENT, build_cache=tmp_path / "build", sandbox=SandboxSettings(level)
    )
    assert report.passed, failures(report)
    expected = CHECK_NAMES[:1] + (["build"] if "build" in manifest else []) + CHECK_NAMES[1:]
    assert [c.name for c in report.checks] == expected
    assert report.startup_ms is not None and report.startup_ms > 0
    assert len(report.decisions_ms) > 100  # five games, every decision timed
    assert report.decision_median_ms is not None and report.decision_max_ms is not None
    assert report.decision_median_ms <= report.decision_max_ms


def test_the_scripted_games_cover_every_player_count_and_variant() -> None:
    games = scripts()
    assert {g.config.players for g in games} == {2, 3, 4, 5}
    assert {g.config.variant.value for g in games} == {"standard", "alternate", "dummy"}
    assert len({g.label for g in games}) == len(games)


def test_every_protocol_section_named_exists_in_protocol_md() -> None:
    text = (ROOT / "protocol" / "PROTOCOL.md").read_text(encoding="utf-8")
    for section in SECTIONS:
        assert f"\n## {section.number}. {section.title}\n" in text, section


# -- broken bots fail the right check, with the right message -------------------------------


def test_a_bot_that_never_answers_hello(tmp_path: Path) -> None:
    report = run_validate(broken_bot("silent_hello", tmp_path), tmp_path, TimeSettings(hello_ms=300))
    hello = check(report, "hello")
    assert not hello.passed
    assert "no reply before the deadline" in hello.message and "flush" in hello.message
    assert hello.protocol_section == "§11 Time"
    assert "did not complete the handshake" in check(report, "2 players, standard").message
    assert report.startup_ms is None and report.decisions_ms == []


def test_a_bot_that_speaks_an_unsupported_protocol_version(tmp_path: Path) -> None:
    report = run_validate(broken_bot("version", tmp_path), tmp_path)
    hello = check(report, "hello")
    assert not hello.passed
    assert "protocol version 2" in hello.message and "[1]" in hello.message
    assert hello.protocol_section == "§6 Messages"
    assert not report.passed


def test_a_bot_that_crashes_on_its_first_chopsticks_offer(tmp_path: Path) -> None:
    report = run_validate(broken_bot("chopsticks_crash", tmp_path), tmp_path)
    assert check(report, "hello").passed
    chopsticks = check(report, "chopsticks offered")
    assert not chopsticks.passed
    assert chopsticks.summary == "crash at 2 players, standard, round 1 turn 2"
    assert "with two (chopsticks)" in chopsticks.message  # what was sent
    assert "exited with status 1" in chopsticks.message  # what came back
    assert "two-card plays: this bot never expected them" in chopsticks.message  # its last stderr line
    assert chopsticks.protocol_section == "§9 The `legal` list"


def test_a_bot_that_answers_with_an_illegal_card(tmp_path: Path) -> None:
    report = run_validate(broken_bot("illegal", tmp_path), tmp_path)
    game = check(report, "2 players, standard")
    assert not game.passed
    assert game.summary == "illegal at 2 players, standard, round 1 turn 1"
    assert '"cards": [999]' in game.message and "not in this seat's hand" in game.message
    assert "one entry of legal" in game.message
    assert game.protocol_section == "§9 The `legal` list"


def test_a_bot_that_ignores_the_dummy_controller_duty(tmp_path: Path) -> None:
    report = run_validate(broken_bot("dummy_ignored", tmp_path), tmp_path)
    controller = check(report, "dummy: controller turn")
    assert not controller.passed
    assert "no dummy_card" in controller.message and "dummy: true" in controller.message
    assert controller.protocol_section == "§10 The two-player dummy variant"
    # Everything that does not involve controlling the dummy passes.
    assert {c.name for c in report.failed} == {"2 players, dummy variant", "dummy: controller turn"}


def test_a_bot_that_prints_non_json(tmp_path: Path) -> None:
    report = run_validate(broken_bot("non_json", tmp_path), tmp_path)
    game = check(report, "2 players, standard")
    assert not game.passed
    assert game.summary.startswith("malformed at 2 players, standard")
    assert "thinking about my move" in game.message and "log to stderr" in game.message
    assert game.protocol_section == "§2 Framing: lines of JSON"


def test_a_bot_that_times_out(tmp_path: Path) -> None:
    report = run_validate(broken_bot("slow", tmp_path), tmp_path, TimeSettings(hello_ms=5_000, turn_ms=100, bank_ms=100))
    timing = check(report, "time")
    assert not timing.passed
    assert "no answer within time_ms=200 ms" in timing.message  # turn 100 + the full bank 100
    # How many later answers also miss (after a timeout the bank is empty) depends on the machine.
    assert re.fullmatch(r"\d+ timeout\(s\), the first at 2 players, standard, round 1 turn 1", timing.summary)
    assert timing.protocol_section == "§11 Time"
    assert check(report, "hello").passed


def test_a_bad_manifest_is_the_first_failed_check(tmp_path: Path) -> None:
    bot = tmp_path / "shelly"
    bot.mkdir()
    (bot / "bot.toml").write_text('run = "python3 bot.py"\n', encoding="utf-8")
    report = run_validate(bot, tmp_path)
    assert [c.name for c in report.checks] == ["bot found"]
    assert "field 'run' must be a list of strings" in report.checks[0].message
    assert report.checks[0].protocol_section == "§15 Packaging your bot"


def test_a_run_command_that_cannot_start_points_at_packaging(tmp_path: Path) -> None:
    bot = tmp_path / "ghost"
    bot.mkdir()
    (bot / "bot.toml").write_text('run = ["./not-built-yet"]\n', encoding="utf-8")
    report = run_validate(bot, tmp_path)
    hello = check(report, "hello")
    assert not hello.passed
    assert "cannot start" in hello.message and "not-built-yet" in hello.message and "check `run`" in hello.message
    assert hello.protocol_section == "§15 Packaging your bot"


def test_a_failed_build_names_its_log(tmp_path: Path) -> None:
    bot = tmp_path / "unbuilt"
    bot.mkdir()
    (bot / "bot.toml").write_text(
        'build = ["{python}", "-c", "import sys; print(\'no compiler here\'); sys.exit(3)"]\nrun = ["./bot"]\n',
        encoding="utf-8",
    )
    report = run_validate(bot, tmp_path)
    build = check(report, "build")
    assert not build.passed
    assert "exit status 3" in build.message and "no compiler here" in build.message
    log = Path(re.search(r"\(log: ([^)]+)\)", build.message).group(1))
    assert log.is_file() and "no compiler here" in log.read_text()


# -- the command line ----------------------------------------------------------------------------

runner = CliRunner()


def test_validate_json_is_one_object_for_scripts() -> None:
    result = runner.invoke(app, ["validate", str(EXAMPLES / "minimal"), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data) >= {"bot", "passed", "checks", "startup_ms", "decision_ms"}
    assert data["bot"] == "minimal" and data["passed"] is True
    assert set(data["decision_ms"]) >= {"median", "max"}
    assert all(set(c) == {"name", "passed", "message", "protocol_section"} for c in data["checks"])


def test_validate_table_marks_each_check_and_exits_1_on_a_failure(tmp_path: Path) -> None:
    result = runner.invoke(app, ["validate", str(broken_bot("illegal", tmp_path)), "--sandbox", "limits"])
    assert result.exit_code == 1
    assert "✗" in result.stdout and "✓" in result.stdout
    assert "\x1b[" not in result.stdout  # colours only on a terminal
    assert "✗ 2 players, standard — PROTOCOL.md §9 The `legal` list" in result.stdout
    assert '"cards": [999]' in result.stdout
    assert "checks failed" in result.stdout


# -- submit ------------------------------------------------------------------------------------------


def fresh_minimal(where: Path) -> Path:
    src = where / "src" / "minimal"
    shutil.copytree(EXAMPLES / "minimal", src, ignore=shutil.ignore_patterns("__pycache__"))
    return src


def test_submit_copies_a_passing_bot_under_its_name_and_accepts_it_again(tmp_path: Path) -> None:
    src = fresh_minimal(tmp_path)
    bots = tmp_path / "bots"
    outcome = submit_bot(src, bots, TOURNAMENT, build_cache=tmp_path / "build")
    assert outcome.copied and outcome.destination == bots / "minimal"
    assert content_hash(bots / "minimal") == content_hash(src)
    assert sorted(p.name for p in bots.iterdir()) == ["minimal"]  # no temporary left behind
    again = submit_bot(src, bots, TOURNAMENT, build_cache=tmp_path / "build")
    assert not again.copied and again.report is None  # the identical bot is already there


def test_submit_refuses_a_name_taken_by_a_different_bot(tmp_path: Path) -> None:
    src = fresh_minimal(tmp_path)
    bots = tmp_path / "bots"
    submit_bot(src, bots, TOURNAMENT, build_cache=tmp_path / "build")
    (src / "bot.py").write_text((src / "bot.py").read_text() + "# a new version\n")
    with pytest.raises(ArenaError, match=r"'minimal' is already taken .* by a different bot"):
        submit_bot(src, bots, TOURNAMENT, build_cache=tmp_path / "build")
    assert content_hash(bots / "minimal") != content_hash(src)


def test_submit_copies_a_single_file_bot(tmp_path: Path) -> None:
    solo = tmp_path / "solo.py"
    shutil.copy(EXAMPLES / "minimal" / "bot.py", solo)
    outcome = submit_bot(solo, tmp_path / "bots", TOURNAMENT, build_cache=tmp_path / "build")
    assert outcome.copied and outcome.destination == tmp_path / "bots" / "solo.py"
    assert (tmp_path / "bots" / "solo.py").read_bytes() == solo.read_bytes()
    assert sorted(p.name for p in (tmp_path / "bots").iterdir()) == ["solo.py"]


def test_submit_refuses_a_bot_that_fails_validation(tmp_path: Path) -> None:
    bots = tmp_path / "bots"
    bots.mkdir()
    env = {**os.environ, "COLUMNS": "200"}
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "submit", str(broken_bot("illegal", tmp_path / "src")), "--bots", str(bots), "--sandbox", "limits"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env,
    )
    assert proc.returncode == 1
    assert "'illegal' was not submitted" in proc.stderr and "999" in proc.stderr
    assert list(bots.iterdir()) == []


def test_submit_never_leaves_a_half_copied_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = fresh_minimal(tmp_path)
    (src / "notes.txt").write_text("a second file, so that the copy can fail half-way\n")
    bots = tmp_path / "bots"
    copied: list[Path] = []
    real_copy = submit_module.copy_bot

    def failing_copy(path: Path, dest: Path) -> str:
        real_copy(path, dest)  # the files are there, half-way to being in place
        copied.append(dest)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(submit_module, "copy_bot", failing_copy)
    with pytest.raises(ArenaError, match="cannot copy the bot into .*No space left"):
        submit_bot(src, bots, TOURNAMENT, build_cache=tmp_path / "build")
    assert copied  # the copy did start
    assert list(bots.iterdir()) == []


# -- the bot author's guide stays true -------------------------------------------------------------

GUIDE = ROOT / "docs" / "writing-a-bot.md"


def _anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_the_guides_sdk_bot_passes_validation(tmp_path: Path) -> None:
    text = GUIDE.read_text(encoding="utf-8")
    bot = tmp_path / "mybot"
    bot.mkdir()
    for name, lang in (("bot.toml", "toml"), ("bot.py", "python")):
        body = re.search(rf"`mybot/{re.escape(name)}`\n\n```{lang}\n(.*?)```", text, re.S)
        assert body is not None, f"the guide shows mybot/{name}"
        (bot / name).write_text(body.group(1), encoding="utf-8")
    report = run_validate(bot, tmp_path)
    assert report.passed, failures(report)
    assert report.bot == "mybot"


def test_the_guides_links_into_protocol_md_exist() -> None:
    protocol = (ROOT / "protocol" / "PROTOCOL.md").read_text(encoding="utf-8")
    anchors = {_anchor(h) for h in re.findall(r"^#{2,3} (.+)$", protocol, re.M)}
    linked = re.findall(r"\(\.\./protocol/PROTOCOL\.md#([^)]+)\)", GUIDE.read_text(encoding="utf-8"))
    assert linked, "the guide links into PROTOCOL.md"
    assert set(linked) <= anchors, set(linked) - anchors


# -- submit --replace ------------------------------------------------------------------------------


def submit_cli(*args: str):  # noqa: ANN201
    return CliRunner().invoke(app, ["submit", *args, "--sandbox", "limits"])


def new_version(src: Path, version: str) -> None:
    toml = src / "bot.toml"
    toml.write_text(re.sub(r'(?m)^version = ".*"$', f'version = "{version}"', toml.read_text()))


def test_submit_replace_swaps_in_the_new_version_and_says_what_it_replaced(tmp_path: Path) -> None:
    src = fresh_minimal(tmp_path)
    bots = tmp_path / "bots"
    assert submit_cli(str(src), "--bots", str(bots)).exit_code == 0
    old_hash = content_hash(bots / "minimal")
    new_version(src, "2")
    refused = submit_cli(str(src), "--bots", str(bots))
    assert refused.exit_code == 1
    assert "'minimal' is already taken" in str(refused.exception) and "--replace" in str(refused.exception)
    assert content_hash(bots / "minimal") == old_hash
    replaced = submit_cli(str(src), "--bots", str(bots), "--replace")
    assert replaced.exit_code == 0, replaced.output
    said = " ".join(replaced.output.split())
    assert f"replaced {bots / 'minimal'}: version 1, content {old_hash} → version 2, content {content_hash(src)}" in said
    assert content_hash(bots / "minimal") == content_hash(src)
    assert sorted(p.name for p in bots.iterdir()) == ["minimal"]  # no temporary, no old copy left behind
    again = submit_cli(str(src), "--bots", str(bots), "--replace")
    assert again.exit_code == 0 and "identical files): nothing to do" in " ".join(again.output.split())


def test_submit_replace_changes_nothing_when_the_new_version_fails(tmp_path: Path) -> None:
    src = fresh_minimal(tmp_path)
    bots = tmp_path / "bots"
    assert submit_cli(str(src), "--bots", str(bots)).exit_code == 0
    old_hash = content_hash(bots / "minimal")
    shutil.copy(broken_bot("illegal", tmp_path / "broken"), src / "bot.py")
    result = submit_cli(str(src), "--bots", str(bots), "--replace")
    assert result.exit_code == 1
    assert "'minimal' was not submitted" in str(result.exception)
    assert content_hash(bots / "minimal") == old_hash
    assert sorted(p.name for p in bots.iterdir()) == ["minimal"]


def test_submit_replace_keeps_the_old_version_if_the_new_one_cannot_be_moved_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = fresh_minimal(tmp_path)
    bots = tmp_path / "bots"
    assert submit_cli(str(src), "--bots", str(bots)).exit_code == 0
    old_hash = content_hash(bots / "minimal")
    new_version(src, "2")
    real_rename = os.rename

    def failing_rename(a: str | Path, b: str | Path) -> None:
        if Path(b) == bots / "minimal" and Path(a).name != "old-minimal":  # the new version moving in
            raise OSError(18, "Invalid cross-device link")
        real_rename(a, b)

    monkeypatch.setattr(os, "rename", failing_rename)
    result = submit_cli(str(src), "--bots", str(bots), "--replace")
    assert result.exit_code == 1
    assert "cannot move the new bot into" in str(result.exception) and "the old one was kept" in str(result.exception)
    assert content_hash(bots / "minimal") == old_hash
    assert sorted(p.name for p in bots.iterdir()) == ["minimal"]
