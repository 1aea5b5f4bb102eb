"""The report in a real browser: Debian's Chromium, driven by Playwright, opens the site from
file:// with no network. The leaderboard shows the store's figures, a replay steps to its
end with the keyboard and shows the replay's final scores, no request leaves file:// and
the console stays free of errors. Screenshots are saved under each test's temporary folder.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from report_helpers import EXAMPLES, make_tournament

from arena.game.replay import read_replay
from arena.report.site import replay_page, write_report
from arena.store.opening import open_store
from arena.tournament.standings import standings

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


def _chromium() -> Path | None:
    if CHROMIUM.exists():
        return CHROMIUM
    found = shutil.which("chromium")
    return Path(found) if found else None


pytestmark = pytest.mark.skipif(
    _chromium() is None,
    reason="Chromium is not installed (/usr/bin/chromium; `apt-get install chromium`, as .ci/run does)",
)


class Browser:
    """One headless Chromium with a new, empty profile; every request is recorded, and
    any that is not for a file is blocked."""

    def __init__(self, context: object) -> None:
        self.context = context
        self.requests: list[str] = []
        self.blocked: list[str] = []
        self.errors: list[str] = []
        context.route("**/*", self._route)  # type: ignore[attr-defined]

    def _route(self, route: object) -> None:
        url = route.request.url  # type: ignore[attr-defined]
        self.requests.append(url)
        if url.startswith("file://"):
            route.continue_()  # type: ignore[attr-defined]
        else:
            self.blocked.append(url)
            route.abort()  # type: ignore[attr-defined]

    def page(self, url: str) -> object:
        page = self.context.new_page()  # type: ignore[attr-defined]
        page.on("console", lambda m: self.errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        page.on("request", lambda r: self.requests.append(r.url))
        page.goto(url)
        return page

    def check_clean(self) -> None:
        """Nothing left file://, and the console had no error."""
        assert self.requests, "no request was seen: the recording does not work"
        assert self.blocked == [] and all(u.startswith("file://") for u in self.requests), self.blocked
        assert self.errors == []


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    results = make_tournament(tmp_path_factory.mktemp("tournament"))
    out = tmp_path_factory.mktemp("site") / "report"
    with open_store(results, create=False) as store:
        write_report(store, out=out)
    return results, out


@pytest.fixture(scope="module")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    profile = tmp_path_factory.mktemp("profile")  # a new, empty user data dir
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(profile), executable_path=str(_chromium()), headless=True, args=ARGS,
            viewport={"width": 1280, "height": 900}, offline=True,
        )
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def browser(chromium: object) -> Iterator[Browser]:
    b = Browser(chromium)
    yield b
    chromium.unroute("**/*")  # type: ignore[attr-defined]
    for page in chromium.pages:  # type: ignore[attr-defined]
        page.close()


def _faults(faults: dict[str, int]) -> str:
    total = sum(faults.values())
    return f"{total} ({', '.join(f'{k} {n}' for k, n in sorted(faults.items()) if n)})" if total else "0"


def test_the_leaderboard_shows_the_stores_rows(site: tuple[Path, Path], browser: Browser, tmp_path: Path) -> None:
    results, out = site
    page = browser.page((out / "index.html").as_uri())
    rows = page.eval_on_selector_all(
        "#leaderboard tbody tr",
        """rows => rows.map(r => ({key: r.dataset.key, ...Object.fromEntries(
            [...r.children].map(c => [c.className.split(' ').find(x => x.startsWith('c-')).slice(2), c.innerText.trim()])
        )}))""",
    )
    with open_store(results, create=False) as store:
        st = standings(store)
    expected = [
        {
            "key": r["key"], "rank": str(r["rank"]), "bot": r["label"], "elo": f"{r['elo']:.0f}", "games": str(r["games"]),
            "wins": f"{r['wins']:g}", "mean_points": f"{r['mean_points']:.1f}", "mean_rank": f"{r['mean_rank']:.2f}",
            "faults": _faults(r["faults"]), "interval": f"{r['elo_low']:.0f}–{r['elo_high']:.0f}",
        }
        for r in st.rows
    ]
    assert [{k: row[k] for k in expected[0]} for row in rows] == expected
    # Figures are rounded as Python rounds them, exact ties included.
    for value, digits in ((1500.5, 0), (1501.5, 0), (0.25, 1), (0.75, 1), (32.45, 1), (2.125, 2), (2.115, 2), (-3.5, 0)):
        assert page.evaluate(f"ArenaUI.fixed({value}, {digits})") == f"{value:.{digits}f}", value
    # One line per bot in the rating plot, a heat-map cell per pair, the faulty bot's faults linked.
    assert page.locator("#rating-chart path[data-key]").count() == len(st.rows)
    assert page.locator("#h2h td.cell:not(.self)").count() == len(st.rows) * (len(st.rows) - 1)
    assert page.locator("#faults a[href^='replay.html#']").count() == 9
    page.screenshot(path=str(tmp_path / "leaderboard.png"), full_page=True)
    # Sorting by keyboard: Tab to the Elo header's button and press Enter (the Elo sort is descending).
    page.locator("#leaderboard th button", has_text="games").focus()
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Enter")
    assert page.get_attribute("#leaderboard th:nth-child(4)", "aria-sort") == "descending"
    elos = [float(t) for t in page.locator("#leaderboard tbody td.c-elo").all_inner_texts()]
    assert elos == sorted(elos, reverse=True)
    browser.check_clean()
    assert (tmp_path / "leaderboard.png").stat().st_size > 10_000


def test_the_games_list_filters_by_bot_and_links_every_replay(site: tuple[Path, Path], browser: Browser) -> None:
    results, out = site
    with open_store(results, create=False) as store:
        everything = store.games(status=None)
        faulty = next(r["key"] for r in standings(store).rows if r["bot"] == "faulty")
        theirs = store.games(status=None, bot=faulty)
    page = browser.page((out / "games.html").as_uri())
    assert page.locator("#games tbody tr").count() == len(everything)
    page.select_option("#filter-bot", faulty)
    assert page.eval_on_selector_all("#games tbody tr", "rs => rs.map(r => r.dataset.game)") == [g.id for g in theirs]
    assert faulty in page.evaluate("decodeURIComponent(location.hash)")
    page.check("#filter-faults")
    assert page.locator("#games tbody tr").count() == 9
    hrefs = page.eval_on_selector_all("#games tbody a", "as => as.map(a => a.getAttribute('href'))")
    assert len(hrefs) == 9 and all(h.startswith("replay.html#") for h in hrefs)
    # The bot's own page: its figures and a row per opponent.
    page.goto((out / "bot.html").as_uri() + "#" + faulty)
    assert page.locator("#opponents tbody tr").count() == 3
    assert page.locator("#bot-faults li").inner_text().startswith("illegal ×9")
    browser.check_clean()


def _final_scores(page: object) -> dict[int, int]:
    cells = page.eval_on_selector_all(  # type: ignore[attr-defined]
        "#ranking tbody tr", "rs => rs.map(r => [Number(r.dataset.seat), Number(r.querySelector('.final-score').innerText)])"
    )
    return dict(cells)


def test_a_replay_steps_to_the_end_with_the_keyboard(site: tuple[Path, Path], browser: Browser, tmp_path: Path) -> None:
    results, out = site
    with open_store(results, create=False) as store:
        game = next(g for g in store.games() if any(s.faults for s in g.seats))
    replay = read_replay(results / game.replay)
    page = browser.page((out / "replay.html").as_uri() + "#" + game.id)
    steps = page.locator("#timeline button").count()
    assert steps == len(replay.turns) + 3 + 1
    # The fault is marked on the timeline at its turn, and the turn shows it.
    fault = replay.faults[0]
    marked = page.eval_on_selector_all("#timeline button:has(.mark.fault)", "bs => bs.map(b => b.getAttribute('aria-label'))")
    # (A seat that used chopsticks that turn is named in the label too: the deal decides it.)
    assert len(marked) == 1 and re.fullmatch(
        rf"round {fault.round} turn {fault.turn}(?:; seat \d used chopsticks)*; fault: seat {fault.seat} {fault.kind}", marked[0]
    ), marked
    page.locator("body").press("ArrowRight")
    assert page.inner_text("#where") == f"Step 2 of {steps}: round 1, turn 2"
    assert f"Fault ({fault.kind})" in page.inner_text(f".seat[data-seat='{fault.seat}'] .act")
    for _ in range(6):
        page.keyboard.press("ArrowRight")
    assert page.locator(".card.picked").count() >= 3 and page.locator(".tableau .card.new").count() >= 3
    page.screenshot(path=str(tmp_path / "replay-mid-game.png"), full_page=True)
    for _ in range(steps):  # more presses than steps: the last one stays put
        page.keyboard.press("ArrowRight")
    assert page.inner_text("#where") == f"Step {steps} of {steps}: final ranking"
    assert page.is_disabled("#btn-next")
    assert _final_scores(page) == dict(enumerate(replay.result.scores))
    page.screenshot(path=str(tmp_path / "replay-final.png"), full_page=True)
    page.keyboard.press("Home")
    assert page.inner_text("#where").startswith(f"Step 1 of {steps}")
    # One seat's view: the other hands are hidden.
    page.select_option("#view", "0")
    assert page.locator(".hand").count() == 1 and page.locator(".hidden-hand").count() == len(replay.seats) - 1
    browser.check_clean()
    assert (tmp_path / "replay-mid-game.png").stat().st_size > 10_000


def test_a_replay_is_readable_on_a_phone(site: tuple[Path, Path], browser: Browser, tmp_path: Path) -> None:
    results, out = site
    with open_store(results, create=False) as store:
        game = store.games()[3]
    page = browser.page((out / "replay.html").as_uri() + f"#{game.id}/2.3")
    page.set_viewport_size({"width": 390, "height": 844})
    assert page.inner_text("#where").endswith("round 2, turn 3")
    # Nothing is wider than the phone: no sideways scrolling of the page.
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path=str(tmp_path / "replay-phone.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})
    browser.check_clean()


def test_the_single_file_replay_page_works_alone(site: tuple[Path, Path], browser: Browser, tmp_path: Path) -> None:
    results, _ = site
    with open_store(results, create=False) as store:
        game = store.games()[5]
    replay = read_replay(results / game.replay)
    alone = tmp_path / "elsewhere" / "game.html"
    alone.parent.mkdir()
    alone.write_text(replay_page(replay), encoding="utf-8")
    page = browser.page(alone.as_uri())
    page.keyboard.press("End")
    assert _final_scores(page) == dict(enumerate(replay.result.scores))
    assert [u for u in browser.requests if u != alone.as_uri()] == []  # it needs nothing beside it
    browser.check_clean()


def test_a_game_missing_from_the_site_says_so(site: tuple[Path, Path], browser: Browser, tmp_path: Path) -> None:
    _, out = site
    page = browser.page((out / "replay.html").as_uri() + "#0000000000000000")
    assert "is missing" in page.inner_text(".problem")
    # The only console error is the browser's own note of the missing file.
    assert len(browser.errors) == 1 and "ERR_FILE_NOT_FOUND" in browser.errors[0]
    assert all(u.startswith("file://") for u in browser.requests)
    manifest = json.loads((out / "report.json").read_text())
    assert manifest["games"] == 12


# -- layout at common widths ------------------------------------------------------------------

WIDTHS = (1280, 1920, 390)

# Where every header and cell of the leaderboard sits, and whether anything sticks out of
# its box: the table past its holder, the page past the window, a header hidden under
# something else or cut off at the window's edge.
_BOARD_GEOMETRY = """() => {
  const table = document.getElementById("leaderboard");
  const holder = table.parentElement;
  const main = document.querySelector("main");
  const right = main.getBoundingClientRect().right - parseFloat(getComputedStyle(main).paddingRight);
  const visible = (node) => {
    const r = node.getBoundingClientRect();
    if (r.width < 1 || r.height < 1 || r.left < 0 || r.right > window.innerWidth + 0.5 || r.right > right + 0.5) return false;
    node.scrollIntoView({block: "center", inline: "nearest"});
    const s = node.getBoundingClientRect();
    const hit = document.elementFromPoint(s.left + s.width / 2, s.top + s.height / 2);
    return !!hit && node.contains(hit);
  };
  return {
    page: [document.documentElement.scrollWidth, document.documentElement.clientWidth],
    table: [table.scrollWidth, table.clientWidth],
    holder: [holder.scrollWidth, holder.clientWidth],
    headers: [...table.querySelectorAll("thead th")].map((th) => [th.innerText.replace(/[↕▲▼]/g, "").trim(), visible(th)]),
    cells: [...table.querySelectorAll("tbody tr")].map((tr) => [...tr.children].map((c) => c.getBoundingClientRect().right <= right + 0.5)),
  };
}"""


def _check_board(page: object, width: int, columns: int) -> None:
    g = page.evaluate(_BOARD_GEOMETRY)  # type: ignore[attr-defined]
    assert g["page"][0] <= g["page"][1] == width, g["page"]  # no page-level sideways scroll
    assert g["table"][0] <= g["table"][1] and g["holder"][0] <= g["holder"][1], g  # no scrollbar on the table
    assert len(g["headers"]) == columns, g["headers"]
    assert [h for h, seen in g["headers"] if not seen] == [], g["headers"]  # every column header visible
    assert all(all(row) for row in g["cells"]), g["cells"]


def test_the_leaderboard_shows_every_column_at_common_widths(site: tuple[Path, Path], browser: Browser, tmp_path: Path) -> None:
    results, out = site
    with open_store(results, create=False) as store:
        rows = standings(store).rows
    columns = 12 + sum(any(r.get(k) is not None for r in rows) for k in ("cpu_ms", "peak_mb"))
    page = browser.page((out / "index.html").as_uri())
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        _check_board(page, width, columns)
        page.locator("section[aria-labelledby='h-board']").screenshot(path=str(tmp_path / f"leaderboard-{width}.png"))
        # A bot with the longest name allowed and a long version string still fits.
        page.evaluate("""() => {
          const row = document.querySelector("#leaderboard tbody tr");
          row.querySelector(".c-bot a").textContent = "a-bot-whose-name-is-as-long-as-a-bot-name-may-be-sixty-four-chars";
          row.querySelector(".c-version").textContent = "2026.12.01-release-candidate-7+g1234abcd";
        }""")
        _check_board(page, width, columns)
        page.reload()
    # The list of games fits too: a card per game on a phone, every game's link on screen.
    games = browser.page((out / "games.html").as_uri())
    for width in WIDTHS:
        games.set_viewport_size({"width": width, "height": 900})
        fit = games.evaluate("""() => { const h = document.getElementById("games").parentElement;
          return [document.documentElement.scrollWidth, h.scrollWidth, h.clientWidth,
                  Math.max(...[...document.querySelectorAll("#games a")].map((a) => a.getBoundingClientRect().right))]; }""")
        assert fit[0] <= width and fit[1] <= fit[2] and fit[3] <= width, (width, fit)
    games.screenshot(path=str(tmp_path / "games-390.png"), full_page=True)
    # On a phone each bot is a card; the headers still sort it.
    page.set_viewport_size({"width": 390, "height": 844})
    page.locator("#leaderboard th button", has_text="games").click()
    assert page.get_attribute("#leaderboard th.num:has(button:text('games'))", "aria-sort") == "descending"
    page.set_viewport_size({"width": 1280, "height": 900})
    browser.check_clean()
    assert (tmp_path / "leaderboard-390.png").stat().st_size > 5_000


@pytest.fixture(scope="module")
def bigger_games(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    """A 4-player and a 5-player game, each as one replay page."""
    import subprocess
    import sys

    folder = tmp_path_factory.mktemp("bigger")
    pages = {}
    for n in (4, 5):
        replay = folder / f"{n}.json.gz"
        bots = [str(EXAMPLES / name) for name in ("random", "greedy", "minimal", "random", "greedy")[:n]]
        proc = subprocess.run(
            [sys.executable, "-m", "arena", "play", *bots, "--seed", str(n), "--sandbox", "none", "--replay", str(replay)],
            cwd=folder, capture_output=True, text=True, timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        pages[n] = folder / f"{n}.html"
        pages[n].write_text(replay_page(read_replay(replay)), encoding="utf-8")
    return pages


def test_the_viewer_lays_the_seats_out_in_seat_order(
    site: tuple[Path, Path], bigger_games: dict[int, Path], browser: Browser, tmp_path: Path
) -> None:
    results, out = site
    with open_store(results, create=False) as store:
        three = store.games()[0].id
    urls = {3: (out / "replay.html").as_uri() + "#" + three, **{n: p.as_uri() for n, p in bigger_games.items()}}
    for n, url in urls.items():
        page = browser.page(url)
        page.keyboard.press("ArrowRight")
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": 900})
            seats = page.eval_on_selector_all(
                ".seat", "ss => ss.map(s => { const r = s.getBoundingClientRect(); return [Number(s.dataset.seat), Math.round(r.top), Math.round(r.left)]; })"
            )
            assert [s for s, _, _ in seats] == list(range(n)), seats  # in the page's order…
            reading = sorted(seats, key=lambda s: (s[1], s[2]))
            assert [s for s, _, _ in reading] == list(range(n)), (n, width, seats)  # …and as the eye reads it
            if width >= 1280:
                rows = [top for _, top, _ in seats]
                assert rows[0] == rows[1], seats  # seat 1 beside seat 0, not under it
                if n == 4:
                    assert rows[2] == rows[3] > rows[1], seats  # 0 1 / 2 3
            assert page.evaluate("document.documentElement.scrollWidth") <= width
            page.screenshot(path=str(tmp_path / f"viewer-{n}p-{width}.png"), full_page=True)
        page.close()
    browser.check_clean()
