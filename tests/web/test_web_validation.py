"""Uploads through the site, validated by the competition's queue (the function the ladder
process runs, called here in its place), seen by their team only: an accepted bot, and a
rejected one whose build log shows on its team's page and nowhere else; the submission's page,
open in Chromium, follows the queue without a reload."""

from __future__ import annotations

import io
import re
import shutil
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT, Server, filled_store, start_server

from arena.competition import load_competition
from arena.competition.validation import validate_next

MINIMAL = ROOT / "example_bots" / "minimal"


def archive(name: str, extra_toml: str = "") -> bytes:
    toml = (MINIMAL / "bot.toml").read_text().replace('name = "minimal"', f'name = "{name}"') + extra_toml
    files = {"bot.toml": toml.encode(), "bot.py": (MINIMAL / "bot.py").read_bytes()}
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz") as tar:
        for fname, data in files.items():
            info = tarfile.TarInfo(f"{name}/{fname}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return raw.getvalue()


@pytest.fixture(scope="module")
def comp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path]]:
    folder = tmp_path_factory.mktemp("validation")
    settings = filled_store(folder, 8)
    config = folder / "competition.toml"
    config.write_text('[game]\nsandbox = "limits"\n[challenges]\nper_hour = 2\n')
    server = start_server(settings.results, "--no-ladder", "--config", str(config), teams=("alpha", "beta"))
    try:
        yield server, config
    finally:
        server.stop()


def test_accepted_and_rejected_uploads_are_their_teams_only(comp: tuple[Server, Path]) -> None:
    server, config = comp
    competition = load_competition(config)
    with server.client(server.tokens["alpha"]) as c:
        good = c.post("/api/submissions", files={"archive": ("good.tar.gz", archive("alphabot"))}).json()
    with server.client(server.tokens["beta"]) as c:
        bad = c.post(
            "/api/submissions",
            files={"archive": ("bad.tar.gz", archive("betabot", 'build = ["sh", "-c", "echo compiling betabot; echo broken-build-XYZ >&2; exit 3"]\n'))},
        ).json()
    done = [validate_next(server.results, competition), validate_next(server.results, competition)]
    assert [d.status for d in done if d is not None] == ["accepted", "rejected"]
    with server.client(server.tokens["alpha"]) as c:
        mine = c.get(f"/api/submissions/{good['id']}").json()
        assert mine["status"] == "accepted" and mine["report"] is not None and mine["bot_name"] == "alphabot"
        assert c.get(f"/api/submissions/{bad['id']}").status_code == 404
        assert "broken-build-XYZ" not in c.get("/api/team").text
    with server.client(server.tokens["beta"]) as c:
        theirs = c.get(f"/api/submissions/{bad['id']}").json()
        assert theirs["status"] == "rejected" and theirs["reason"]
        assert "broken-build-XYZ" in (theirs["build_log"] or "") + str(theirs["report"])
    with server.client(follow_redirects=False) as c:
        nonce = re.search(r'name="csrf" value="([^"]+)"', c.get("/login").text).group(1)  # type: ignore[union-attr]
        c.post("/login", data={"token": server.tokens["beta"], "csrf": nonce})
        page = c.get(f"/team/submissions/{bad['id']}")
        assert page.status_code == 200 and "rejected" in page.text and "broken-build-XYZ" in page.text
        assert c.get(f"/team/submissions/{good['id']}").status_code == 404
    with server.client() as c:  # nobody's: nothing of either
        assert c.get(f"/api/submissions/{bad['id']}").status_code == 401


CHROMIUM = Path("/usr/bin/chromium")


@pytest.mark.skipif(not CHROMIUM.exists() and shutil.which("chromium") is None, reason="Chromium is not installed")
def test_submission_page_follows_the_queue_without_reload(comp: tuple[Server, Path], tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    server, config = comp
    competition = load_competition(config)
    with sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=str(CHROMIUM if CHROMIUM.exists() else shutil.which("chromium")),
            headless=True, args=["--no-sandbox", "--disable-gpu", "--no-first-run"],
        )
        try:
            page = ctx.new_page()
            errors: list[str] = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.goto(server.url + "/login")
            page.fill("#token", server.tokens["alpha"])
            page.click("form[action='/login'] button")
            page.wait_for_url("**/team")
            page.set_input_files("#archive", files=[{"name": "again.tar.gz", "mimeType": "application/gzip", "buffer": archive("alphabot")}])
            page.click("form[action='/team/submissions'] button")
            page.wait_for_url("**/team/submissions/*")
            expect(page.locator("#status")).to_have_text("queued")
            page.evaluate("window.__marker = 1")
            assert validate_next(server.results, competition).status == "accepted"  # type: ignore[union-attr]
            expect(page.locator("#status")).to_have_text("accepted", timeout=30_000)
            assert page.evaluate("window.__marker") == 1
            assert errors == []
        finally:
            ctx.close()


def test_challenges_by_the_api_and_the_form(comp: tuple[Server, Path]) -> None:
    """Once both teams have an accepted bot, alpha asks for unranked games against beta's: by
    the API (listed for alpha only) and by the team page's form; past the hourly cap, 429."""
    server, config = comp
    competition = load_competition(config)
    with server.client(server.tokens["beta"]) as c:
        c.post("/api/submissions", files={"archive": ("b2.tar.gz", archive("betabot"))})
    while validate_next(server.results, competition) is not None:
        continue
    with server.client(server.tokens["alpha"]) as c:
        asked = c.post("/api/challenges", json={"opponents": ["beta"], "games": 2})
        assert asked.status_code == 201, asked.text
        assert asked.json()["status"] == "queued" and asked.json()["opponents"] == ["beta"]
        assert [ch["id"] for ch in c.get("/api/challenges").json()["challenges"]] == [asked.json()["id"]]
        assert c.post("/api/challenges", json={"opponents": ["nobody"], "games": 2}).status_code == 404
        assert c.post("/api/challenges", json={"opponents": [], "games": 2}).status_code == 400
        assert c.post("/api/challenges", json={"opponents": ["beta"], "games": "many"}).status_code == 400
    with server.client(server.tokens["beta"]) as c:
        assert c.get("/api/challenges").json()["challenges"] == []
    with server.client() as c:
        assert c.post("/api/challenges", json={"opponents": ["beta"], "games": 2}).status_code == 401
    with server.client(follow_redirects=False) as c:
        nonce = re.search(r'name="csrf" value="([^"]+)"', c.get("/login").text).group(1)  # type: ignore[union-attr]
        c.post("/login", data={"token": server.tokens["alpha"], "csrf": nonce})
        page = c.get("/team")
        assert "Ask for a challenge" in page.text
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
        assert c.post("/team/challenges", data={"opponents": "betabot", "games": "1"}).status_code == 403
        assert c.post("/team/challenges", data={"opponents": "betabot", "games": "1", "csrf": csrf}).status_code == 303
        capped = c.post("/team/challenges", data={"opponents": "betabot", "games": "1", "csrf": csrf})
        assert capped.status_code == 429 and int(capped.headers["retry-after"]) > 0
