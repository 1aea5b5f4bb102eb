"""Teams on a real `arena serve`: tokens refused (none, wrong, another team's), uploads by
the API, the web form and `arena submit --server`, hostile requests (oversized, bad multipart,
not an archive) refused with the right status, CSRF on forms, the session cookie's flags, and
the hourly upload cap as 429 with Retry-After."""

from __future__ import annotations

import io
import json
import re
import socket
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT, Server, arena, filled_store, start_server

MINIMAL = ROOT / "example_bots" / "minimal"
CAP = 40_000


def bot_archive(name: str = "webbot", pad: int = 0) -> bytes:
    toml = (MINIMAL / "bot.toml").read_text().replace('name = "minimal"', f'name = "{name}"')
    files = {"bot.toml": toml.encode(), "bot.py": (MINIMAL / "bot.py").read_bytes()}
    if pad:
        files["pad.bin"] = bytes(range(256)) * (pad // 256 + 1)
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz", compresslevel=0) as tar:
        for fname, data in files.items():
            info = tarfile.TarInfo(f"{name}/{fname}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return raw.getvalue()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("teams")
    settings = filled_store(folder, 12)
    config = folder / "competition.toml"
    config.write_text(f'[game]\nsandbox = "limits"\n[uploads]\nmax_bytes = {CAP}\nper_hour = 3\n')
    srv = start_server(settings.results, "--no-ladder", "--config", str(config),
                       teams=("alpha", "beta", "gamma", "delta"), admin="boss")
    try:
        yield srv
    finally:
        srv.stop()


def upload(srv: Server, token: str | None, data: bytes, name: str = "bot.tar.gz", field: str = "archive"):  # noqa: ANN201
    with srv.client(token) as c:
        return c.post("/api/submissions", files={field: (name, data, "application/gzip")})


def test_upload_and_read_back_by_its_team_only(server: Server) -> None:
    made = upload(server, server.tokens["alpha"], bot_archive())
    assert made.status_code == 201, made.text
    sub = made.json()
    assert sub["status"] == "queued" and isinstance(sub["id"], int)
    path = f"/api/submissions/{sub['id']}"
    with server.client(server.tokens["alpha"]) as c:
        mine = c.get(path)
        assert mine.status_code == 200 and mine.json()["status"] == "queued" and "report" in mine.json()
        assert [s["id"] for s in c.get("/api/submissions").json()["submissions"]] == [sub["id"]]
    with server.client() as c:
        none = c.get(path)
        assert none.status_code == 401 and none.headers["www-authenticate"].startswith("Bearer")
    with server.client("not-a-token-of-anyone-at-all-0123456789") as c:
        assert c.get(path).status_code == 401
    with server.client(server.tokens["beta"]) as c:
        other = c.get(path)
        assert other.status_code == 404 and "report" not in other.json()
    with server.client(server.tokens["boss"]) as c:
        assert c.get(path).json()["id"] == sub["id"]


def test_upload_without_or_with_a_wrong_token_is_401(server: Server) -> None:
    assert upload(server, None, bot_archive()).status_code == 401
    assert upload(server, "x" * 43, bot_archive()).status_code == 401
    with server.client() as c:
        r = c.post("/api/submissions", files={"archive": ("a.tgz", bot_archive())}, headers={"authorization": "Basic YTpi"})
    assert r.status_code == 401


def test_oversized_upload_is_413(server: Server) -> None:
    big = bot_archive(pad=CAP + 1000)
    assert len(big) > CAP
    r = upload(server, server.tokens["delta"], big)
    assert r.status_code == 413, r.text
    assert "bytes" in r.json()["error"]
    # Far past the cap: refused before the body is read.
    r = upload(server, server.tokens["delta"], b"\x1f\x8b" + b"\0" * (CAP + 200_000))
    assert r.status_code == 413


def test_not_an_archive_and_bad_multipart_are_400(server: Server) -> None:
    r = upload(server, server.tokens["delta"], b"#!/bin/sh\necho hi\n", name="bot.sh")
    assert r.status_code == 400 and "zip" in r.json()["error"]
    r = upload(server, server.tokens["delta"], bot_archive(), field="file")
    assert r.status_code == 400 and "archive" in r.json()["error"]
    with server.client(server.tokens["delta"]) as c:
        r = c.post("/api/submissions", content=b"--zzz\r\nContent-Disposition: form-data; name=\"archive\"\r\n\r\nabc",
                   headers={"content-type": "multipart/form-data; boundary=zzz"})
        assert r.status_code == 400
        r = c.post("/api/submissions", content=b"garbage", headers={"content-type": "multipart/form-data"})
        assert r.status_code == 400
        r = c.post("/api/submissions", json={"archive": "x"})
        assert r.status_code == 400


def test_hourly_upload_cap_is_429_with_retry_after(server: Server) -> None:
    token = server.tokens["gamma"]
    codes = [upload(server, token, bot_archive("gammabot")).status_code for _ in range(3)]
    assert codes == [201, 201, 201]
    r = upload(server, token, bot_archive("gammabot"))
    assert r.status_code == 429 and int(r.headers["retry-after"]) > 0


def _csrf(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, html[:500]
    return found.group(1)


def test_web_login_upload_and_csrf(server: Server) -> None:
    with server.client(follow_redirects=False) as c:
        form = c.get("/login")
        token_field = _csrf(form.text)
        wrong = c.post("/login", data={"token": "x" * 43, "csrf": token_field})
        assert wrong.status_code == 401
        forged = c.post("/login", data={"token": server.tokens["alpha"], "csrf": "forged"})
        assert forged.status_code == 403
        ok = c.post("/login", data={"token": server.tokens["alpha"], "csrf": token_field})
        assert ok.status_code == 303 and ok.headers["location"] == "/team"
        cookie = [v for k, v in ok.headers.multi_items() if k == "set-cookie" and v.startswith("arena_session=")][0]
        assert "HttpOnly" in cookie and "SameSite=lax" in cookie.replace("Lax", "lax") and "Secure" not in cookie
        assert server.tokens["alpha"] not in cookie
        page = c.get("/team")
        assert page.status_code == 200 and "Team alpha" in page.text
        csrf = _csrf(page.text)
        no_csrf = c.post("/team/submissions", files={"archive": ("b.tar.gz", bot_archive())})
        assert no_csrf.status_code == 403
        sent = c.post("/team/submissions", files={"archive": ("b.tar.gz", bot_archive())}, data={"csrf": csrf})
        assert sent.status_code == 303
        shown = c.get(sent.headers["location"])
        assert shown.status_code == 200 and "queued" in shown.text
        # A cookie alone never makes the API's POST count (no CSRF there: a token is needed).
        assert c.post("/api/submissions", files={"archive": ("b.tar.gz", bot_archive())}).status_code == 401
        # Another team's submission page is not found for this session.
        other = upload(server, server.tokens["beta"], bot_archive("betabot")).json()["id"]
        assert c.get(f"/team/submissions/{other}").status_code == 404
        assert c.post("/logout", data={"csrf": csrf}).status_code == 303
    with server.client(follow_redirects=False) as c:
        assert c.get("/team").status_code == 303  # to the login page


def test_a_forged_session_cookie_is_no_session(server: Server) -> None:
    with server.client(follow_redirects=False) as c:
        c.cookies.set("arena_session", "eyJ0IjoxLCJjIjoiYSIsImkiOjE3OTYxODYxNzh9.AAAA")
        assert c.get("/team").status_code == 303


def test_arena_submit_to_the_server(server: Server, tmp_path: Path) -> None:
    bot = tmp_path / "cli-bot"
    bot.mkdir()
    (bot / "bot.toml").write_text((MINIMAL / "bot.toml").read_text().replace('name = "minimal"', 'name = "clibot"'))
    (bot / "bot.py").write_bytes((MINIMAL / "bot.py").read_bytes())
    (bot / "__pycache__").mkdir()
    (bot / "__pycache__" / "x.pyc").write_bytes(b"junk")
    done = arena("submit", str(bot), "--server", server.url, "--token", server.tokens["delta"], "--json")
    sub = json.loads(done.stdout)
    assert sub["status"] == "queued" and isinstance(sub["id"], int)
    with server.client(server.tokens["delta"]) as c:
        assert c.get(f"/api/submissions/{sub['id']}").json()["archive_name"] == "cli-bot.tar.gz"
    wrong = arena("submit", str(bot), "--server", server.url, "--token", "nope" * 11, check=False)
    assert wrong.returncode == 1 and "401" in wrong.stderr and "Traceback" not in wrong.stderr
    (bot / "link").symlink_to("/etc/passwd")
    linked = arena("submit", str(bot), "--server", server.url, "--token", server.tokens["delta"], check=False)
    assert linked.returncode == 1 and "symbolic link" in linked.stderr


def test_serve_refuses_a_bad_config_naming_the_key(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text("[uploads]\nmax_bytes = -5\n")
    done = arena("serve", "--results", str(tmp_path / "r"), "--config", str(config), "--no-ladder", check=False)
    assert done.returncode == 1 and "max_bytes" in done.stderr and "Traceback" not in done.stderr


def test_a_slow_client_does_not_hold_the_server(server: Server) -> None:
    """A connection that sends half a request and waits does not stop others being served."""
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as s:
        s.sendall(b"POST /api/submissions HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\npartial")
        with server.client() as c:
            assert c.get("/api/leaderboard").status_code == 200


def test_admin_routes_are_the_admins_only(server: Server) -> None:
    with server.client(server.tokens["alpha"]) as c:
        assert c.get("/api/admin").status_code == 403
        assert c.get("/api/admin/standings").status_code == 403
    with server.client() as c:
        assert c.get("/api/admin").status_code == 401
    with server.client(server.tokens["boss"]) as c:
        doc = c.get("/api/admin").json()
        assert {"alpha", "beta", "boss"} <= {t["name"] for t in doc["teams"]}
        assert set(doc["queue"]) == {"queued", "building", "validating", "accepted", "rejected"}
        board = c.get("/api/leaderboard").json()
        assert c.get("/api/admin/standings").json() == board
        text = c.get("/api/admin/standings", params={"format": "csv"}).text.splitlines()
        assert text[0].startswith("rank,bot,version,key,elo") and len(text) == 1 + len(board["rows"])
        assert c.get("/api/admin/standings", params={"format": "xml"}).status_code == 400


def test_admin_page_behind_the_admins_login(server: Server) -> None:
    for name, status in (("alpha", 403), ("boss", 200)):
        with server.client(follow_redirects=False) as c:
            nonce = _csrf(c.get("/login").text)
            assert c.post("/login", data={"token": server.tokens[name], "csrf": nonce}).status_code == 303
            page = c.get("/admin")
            assert page.status_code == status
            if status == 200:
                assert "Validation queue" in page.text and ">alpha<" in page.text


def test_admin_pauses_and_resumes_the_ladder(server: Server) -> None:
    with server.client(server.tokens["alpha"]) as c:
        assert c.post("/api/admin/pause").status_code == 403
    with server.client(server.tokens["boss"]) as c:
        assert c.post("/api/admin/pause").json()["paused"] is True
        assert c.get("/api/admin").json()["ladder"]["paused"] is True
        assert c.post("/api/admin/resume").json()["paused"] is False
    with server.client(follow_redirects=False) as c:  # the page's forms, with their CSRF field
        nonce = _csrf(c.get("/login").text)
        c.post("/login", data={"token": server.tokens["boss"], "csrf": nonce})
        page = c.get("/admin")
        assert "Pause the ladder" in page.text
        assert c.post("/admin/pause", data={"csrf": "forged"}).status_code == 403
        assert c.post("/admin/pause", data={"csrf": _csrf(page.text)}).status_code == 303
        assert "Resume the ladder" in c.get("/admin").text
        c.post("/admin/resume", data={"csrf": _csrf(c.get("/admin").text)})
    with server.client(server.tokens["boss"]) as c:
        assert c.get("/api/admin").json()["ladder"]["paused"] is False
