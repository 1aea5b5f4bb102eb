"""The site in a real browser (Debian's Chromium through Playwright) against a real `arena
serve`: the open leaderboard follows new games without a reload, a replay opens in the
report's viewer and steps to its end, and no page breaks its own Content-Security-Policy
(a blocked script or style is a console error here). No request leaves the server."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import Server, arena, fill_store, filled_store, start_server

from arena.tournament.settings import RunSettings

try:
    from playwright.sync_api import expect
except ImportError:  # the test extra's; without it every test here is skipped below
    expect = None

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--no-first-run", "--disable-sync"]


def _chromium() -> Path | None:
    if CHROMIUM.exists():
        return CHROMIUM
    found = shutil.which("chromium")
    return Path(found) if found else None


pytestmark = pytest.mark.skipif(
    _chromium() is None,
    reason="Chromium is not installed (/usr/bin/chromium; `apt-get install chromium`, as .ci/run does)",
)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, RunSettings]]:
    folder = tmp_path_factory.mktemp("browser")
    settings = filled_store(folder, 20)
    server = start_server(settings.results, "--no-ladder")
    try:
        yield server, settings
    finally:
        server.stop()


@pytest.fixture(scope="module")
def context(tmp_path_factory: pytest.TempPathFactory, site: tuple[Server, RunSettings]) -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    server, _ = site
    profile = tmp_path_factory.mktemp("profile")
    with sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            str(profile), executable_path=str(_chromium()), headless=True, args=ARGS, viewport={"width": 390, "height": 800},
        )
        # Only the server is reachable: anything else is blocked (and would fail the test).
        ctx.route("**/*", lambda route: route.continue_() if route.request.url.startswith(server.url) else route.abort())
        try:
            yield ctx
        finally:
            ctx.close()


class Watched:
    def __init__(self, page: object, server: Server) -> None:
        self.page = page
        self.errors: list[str] = []
        self.foreign: list[str] = []
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)  # type: ignore[attr-defined]
        page.on("pageerror", lambda e: self.errors.append(str(e)))  # type: ignore[attr-defined]
        page.on("request", lambda r: None if r.url.startswith(server.url) else self.foreign.append(r.url))  # type: ignore[attr-defined]


def test_leaderboard_updates_in_an_open_page_without_reload(context: object, site: tuple[Server, RunSettings], tmp_path: Path) -> None:
    server, settings = site
    page = context.new_page()  # type: ignore[attr-defined]
    watched = Watched(page, server)
    navigations: list[str] = []
    page.on("framenavigated", lambda f: navigations.append(f.url) if f == page.main_frame else None)
    page.goto(server.url + "/")
    assert page.locator("#games-count").inner_text() == "20"
    assert page.locator("#leaderboard tbody tr").count() == 6
    page.evaluate("window.__marker = 'still this page'")
    fill_store(settings, 20, 32)
    # (Polled by Playwright's locator: the page's policy forbids the eval a string predicate needs.)
    expect(page.locator("#games-count")).to_have_text("32", timeout=30_000)
    assert page.evaluate("window.__marker") == "still this page"  # no reload happened
    assert len(navigations) == 1
    page.screenshot(path=str(tmp_path / "leaderboard.png"), full_page=True)
    # Readable at phone width: the page itself does not scroll sideways (the table may, in its box).
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    assert watched.errors == [] and watched.foreign == []
    page.close()


def test_a_replay_opens_and_steps_to_its_end(context: object, site: tuple[Server, RunSettings], tmp_path: Path) -> None:
    server, _ = site
    page = context.new_page()  # type: ignore[attr-defined]
    watched = Watched(page, server)
    page.goto(server.url + "/games")
    link = page.locator("table.games a").first
    game_id = link.inner_text()
    link.click()
    page.wait_for_url(f"**/games/{game_id}")
    page.wait_for_selector("#btn-last", timeout=15_000)
    page.keyboard.press("End")
    expect(page.locator("#btn-last")).to_be_disabled(timeout=10_000)
    text = page.locator("#viewer").inner_text()
    games = json.loads(arena("games", str(server.results), "--json").stdout)["games"]
    scores = next(g for g in games if g["id"] == game_id)["seats"]
    for seat in scores:
        assert seat["bot"] in text
    page.screenshot(path=str(tmp_path / "replay.png"), full_page=True)
    assert watched.errors == [] and watched.foreign == []
    page.close()


def test_bot_page_draws_without_errors(context: object, site: tuple[Server, RunSettings]) -> None:
    server, _ = site
    page = context.new_page()  # type: ignore[attr-defined]
    watched = Watched(page, server)
    page.goto(server.url + "/")
    page.locator("#leaderboard tbody a").first.click()
    page.wait_for_selector("svg.chart polyline")
    assert watched.errors == [] and watched.foreign == []
    page.close()
