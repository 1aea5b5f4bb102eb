"""The docs speak for themselves: docs/RULES.md names the rule texts it comes from and
quotes them by those names, never by words only its authors knew; the README's test
command is the one CI runs, and it says what CI installs first."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RULES = (ROOT / "docs" / "RULES.md").read_text(encoding="utf-8")
README = (ROOT / "README.md").read_text(encoding="utf-8")
CI = (ROOT / ".ci" / "run").read_text(encoding="utf-8")

TITLES = (
    "*Sushi Go! – Spelregels en Speluitleg*",
    "*Spelregels Sushi Go!*",
    "*Sushi Go regler på norsk – komplett guide til poeng og kort*",
)
NAMES = ("BRDGMZ", "Spelregelwijzer", "the Norwegian guide")


def test_rules_name_the_rule_texts_they_come_from() -> None:
    head = RULES.split("## Cards", 1)[0]
    for title, name in zip(TITLES, NAMES, strict=True):
        assert title in head, title
        assert f"**{name}**" in head, name
    assert "Dutch" in head and "Norwegian" in head
    # Each text is cited by its name where a rule leans on it.
    body = RULES.split("## Cards", 1)[1]
    for name in ("BRDGMZ", "Spelregelwijzer", "Norwegian guide"):
        assert name in body, name


def test_rules_use_no_internal_word_for_the_rule_texts() -> None:
    for pattern in (r"\bseeds\b", r"\bseed\s*0\d\d\b", r"\bseeds?'", r"\bthe task\b", r"\bthe brief\b", r"\bcorpus\b"):
        found = re.search(pattern, RULES, flags=re.IGNORECASE)
        assert found is None, (pattern, RULES[max(0, found.start() - 60) : found.end() + 60])
    # "seed" is left only where it is a game's random seed.
    for found in re.finditer(r"\bseed\w*", RULES, flags=re.IGNORECASE):
        before = RULES[max(0, found.start() - 7) : found.start()]
        assert found.group() == "seeded" or before == "game's ", RULES[found.start() - 60 : found.end() + 60]


def test_the_readme_test_command_is_what_ci_runs_and_says_what_ci_installs() -> None:
    blocks = re.findall(r"```sh\n(.*?)\n```", README, flags=re.DOTALL)
    command = next(b for b in blocks if "pytest" in b)
    ci_lines = [line.strip() for line in CI.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert command in ci_lines, (command, ci_lines)
    said = README.split(command, 1)[1].split("\n\n", 2)[1]  # the paragraph after the command
    assert ".ci/run" in said
    for package in ("bubblewrap", "chromium"):
        assert package in CI and package in said, package
    assert "toolchains" in said and "ordinary user" in said
