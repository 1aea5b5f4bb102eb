"""The teams' and the admin's part of the site: logging in with a team token, a team's own page
(its submissions with their validation reports and build logs, its challenges, its bot's games
with their faults: the replay viewer shows its own seats' stderr), uploads, challenges, and the
admin's pages (teams, queues, the ladder's state, pause and resume, the standings as CSV and
JSON); with their API twins (``Authorization: Bearer TOKEN``).

What a team may see is decided here, once per request (:class:`Viewer`): a submission, its
report and its log belong to the team that sent it and to the admin; any other asker gets 404,
as if it did not exist. Uploads are limited per team and hour by the competition's core (the
competition's ``uploads_per_hour``: 429 with ``Retry-After``); failed logins and bearer tokens
here, per client address and minute, so that the token check's cost (argon2, on purpose) cannot
be used to load the server.
"""

from __future__ import annotations

import csv
import hashlib
import io
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import msgspec
from litestar import Request, Response, get, post
from litestar.datastructures import Cookie, UploadFile
from litestar.enums import RequestEncodingType
from litestar.exceptions import HTTPException, NotAuthorizedException
from litestar.params import Body, Parameter
from litestar.response import Redirect, Template

from arena.competition import Competition, Ladder, Submission, Submissions, Team, Teams
from arena.competition.errors import Forbidden, NotFound, RateLimited, UploadRefused
from arena.web.public import data_of, page
from arena.web.security import LOGIN_COOKIE, SESSION_COOKIE, SESSION_S, Signer, bearer_token, load_secret, same_token

#: Failed token checks a client address may make per minute before it gets 429.
FAILED_AUTH_PER_MINUTE = 20
#: How long a checked bearer token is trusted without checking it again (argon2 is slow on
#: purpose); a revoked team is refused at once all the same (its row is read every time).
AUTH_CACHE_S = 60.0


class TooMany(HTTPException):
    status_code = 429


@dataclass(frozen=True, slots=True)
class Viewer:
    """Who asks: a team (by session or token), with the session's CSRF token for its forms."""

    id: int
    name: str
    is_admin: bool
    csrf: str = ""


class Limiter:
    """At most ``limit`` events per ``window_s`` per key (a sliding window, in memory)."""

    def __init__(self, limit: int, window_s: float) -> None:
        self.limit, self.window_s = limit, window_s
        self._events: dict[Any, deque[float]] = {}
        self._lock = threading.Lock()

    def retry_after(self, key: Any, *, count: bool = True) -> int | None:
        """None if one more event of ``key`` is allowed now (and, with ``count``, counted),
        else the seconds until it is."""
        now = time.monotonic()
        with self._lock:
            events = self._events.setdefault(key, deque())
            while events and now - events[0] >= self.window_s:
                events.popleft()
            if len(events) >= self.limit:
                return max(1, int(self.window_s - (now - events[0])) + 1)
            if count:
                events.append(now)
            if len(self._events) > 100_000:  # forget idle keys: memory stays bounded
                self._events = {k: v for k, v in self._events.items() if v}
            return None

    def count(self, key: Any) -> None:
        with self._lock:
            self._events.setdefault(key, deque()).append(time.monotonic())


class TeamsPart:
    """The competition's objects the pages use, and who is asking."""

    def __init__(self, results: Path, competition: Competition) -> None:
        self.results = results
        self.competition = competition
        self.teams = Teams(results, competition)
        self.submissions = Submissions(results, competition)
        self.ladder = Ladder(results, competition)
        self.signer = Signer(load_secret(results))
        self.failed_auth = Limiter(FAILED_AUTH_PER_MINUTE, 60.0)
        self._tokens: dict[bytes, tuple[int, float]] = {}
        self._tokens_lock = threading.Lock()

    # -- who asks ------------------------------------------------------------------------

    def team_by_id(self, team_id: int) -> Team | None:
        """The team of this id, None if there is none or it is revoked."""
        team = self.teams.by_id(team_id)
        return None if team is None or team.revoked else team

    def from_session(self, request: Request) -> Viewer | None:
        session = self.signer.read_session(request.cookies.get(SESSION_COOKIE))
        if session is None:
            return None
        team = self.team_by_id(session.team_id)
        return None if team is None else Viewer(team.id, team.name, bool(team.is_admin), session.csrf)

    def _check_token(self, request: Request, token: str) -> Any | None:
        digest = hashlib.sha256(token.encode()).digest()
        now = time.monotonic()
        with self._tokens_lock:
            hit = self._tokens.get(digest)
        if hit is not None and now - hit[1] < AUTH_CACHE_S:
            return self.team_by_id(hit[0])
        client = request.client.host if request.client else "?"
        wait = self.failed_auth.retry_after(client, count=False)
        if wait is not None:
            raise TooMany(detail=f"too many failed token checks from {client}: try again in {wait} s",
                          headers={"retry-after": str(wait)})
        team = self.teams.authenticate(token)
        if team is None:
            self.failed_auth.count(client)
            return None
        with self._tokens_lock:
            if len(self._tokens) > 10_000:
                self._tokens.clear()
            self._tokens[digest] = (team.id, now)
        return team

    def from_bearer(self, request: Request) -> Viewer | None:
        header = request.headers.get("authorization")
        if header is None:
            return None
        token = bearer_token(header)
        team = self._check_token(request, token) if token is not None else None
        if team is None:
            raise NotAuthorizedException(detail="the Authorization header holds no valid team token",
                                         headers={"www-authenticate": 'Bearer realm="arena"'})
        return Viewer(team.id, team.name, bool(team.is_admin))

    def api_viewer(self, request: Request, *, cookie_too: bool = True) -> Viewer:
        """The team a request of the API comes from: its bearer token, or (for reading only)
        its session. 401 without either."""
        viewer = self.from_bearer(request)
        if viewer is None and cookie_too:
            viewer = self.from_session(request)
        if viewer is None:
            raise NotAuthorizedException(detail="a team token is needed (Authorization: Bearer TOKEN)",
                                         headers={"www-authenticate": 'Bearer realm="arena"'})
        return viewer

    def page_viewer(self, request: Request) -> Viewer:
        viewer = self.from_session(request)
        if viewer is None:
            raise LoginNeeded()
        return viewer

    def own_bots(self, viewer: Viewer | None) -> set[str]:
        if viewer is None:
            return set()
        return {s.bot_name for s in self.submissions.for_team(viewer.id) if s.bot_name}

    def replay_viewer(self, request: Request) -> tuple[set[str], bool]:
        """Whose stderr and debug values a request may read in a replay."""
        try:
            viewer = self.from_bearer(request) or self.from_session(request)
        except HTTPException:
            viewer = None
        if viewer is None:
            return set(), False
        return self.own_bots(viewer), viewer.is_admin

    def whoami(self, request: Request) -> Viewer | None:
        return self.from_session(request)

    # -- what a team may see -------------------------------------------------------------

    def submission_for(self, viewer: Viewer, submission_id: int) -> Any:
        found = self.submissions.get(submission_id)
        if found is None or (found.team_id != viewer.id and not viewer.is_admin):
            raise NotFound(f"no submission {submission_id} of team {viewer.name}")
        return found


class LoginNeeded(Exception):
    """A page that needs a logged-in team, asked without a session: to the login page."""


def part_of(request: Request) -> TeamsPart:
    return request.app.state.teams


def submission_doc(sub: Submission) -> dict[str, Any]:
    """A submission as the API returns it to its team (``status``, ``reason``, ``report``,
    ``build_log``, ...)."""
    return {**sub.to_dict(private=True), "url": f"/api/submissions/{sub.id}", "page": f"/team/submissions/{sub.id}"}


def error_status(exc: Exception) -> tuple[int, dict[str, str]] | None:
    """The HTTP status (and headers) of the competition's errors (any other: 400)."""
    if isinstance(exc, RateLimited):
        return 429, {"retry-after": str(max(1, int(exc.retry_after)))}
    if isinstance(exc, UploadRefused):
        return (413 if exc.too_large else 400), {}
    if isinstance(exc, NotFound):
        return 404, {}
    if isinstance(exc, Forbidden):
        return 403, {}
    return None


# -- logging in ---------------------------------------------------------------------------


def _cookie(request: Request, name: str, value: str, max_age: int) -> Cookie:
    return Cookie(
        key=name, value=value, max_age=max_age, httponly=True, samesite="lax", path="/",
        secure=request.url.scheme == "https",
    )


# (Two handlers of one path, both run in a worker thread, trip litestar 2.25: it wraps one of
# the first one registered twice and its response is a coroutine. The cheap one of each such
# pair runs in the loop, and is registered first: ROUTES.)
@get("/login", include_in_schema=False, sync_to_thread=False)
def login_page(request: Request) -> Template:
    import secrets

    nonce = secrets.token_urlsafe(24)
    response = page(request, "login.html", csrf=nonce, invite=part_of(request).competition.invite_code is not None)
    response.cookies.append(_cookie(request, LOGIN_COOKIE, nonce, 3600))
    return response


def check_login_form(request: Request, csrf: str) -> None:
    """A form shown before any session (login, registration): its CSRF field must match the
    nonce its page set in a cookie (else 403)."""
    if not same_token(csrf, request.cookies.get(LOGIN_COOKIE, "")):
        raise HTTPException(status_code=403, detail="the form expired or was not sent from this site: load it again")


class LoginForm(msgspec.Struct):
    token: Annotated[str, msgspec.Meta(max_length=256)] = ""
    csrf: Annotated[str, msgspec.Meta(max_length=128)] = ""


@post("/login", include_in_schema=False, sync_to_thread=True)
def login(request: Request, data: Annotated[LoginForm, Body(media_type=RequestEncodingType.URL_ENCODED)]) -> Any:
    part = part_of(request)
    check_login_form(request, data.csrf)
    team = part._check_token(request, data.token.strip())
    if team is None:
        raise NotAuthorizedException(detail="that is not a valid team token")
    value, _ = part.signer.session_cookie(team.id)
    response = Redirect("/team", status_code=303)
    response.cookies.append(_cookie(request, SESSION_COOKIE, value, SESSION_S))
    response.cookies.append(Cookie(key=LOGIN_COOKIE, value="", max_age=0, path="/"))
    return response


class CsrfForm(msgspec.Struct):
    csrf: Annotated[str, msgspec.Meta(max_length=128)] = ""


def checked_form(request: Request, csrf: str) -> Viewer:
    """The logged-in team of a form's request, whose CSRF field matches its session (else 403)."""
    viewer = part_of(request).page_viewer(request)
    if not same_token(csrf, viewer.csrf):
        raise HTTPException(status_code=403, detail="the form was not sent from this site's page (CSRF check): load the page again")
    return viewer


@post("/logout", include_in_schema=False, sync_to_thread=True)
def logout(request: Request, data: Annotated[CsrfForm, Body(media_type=RequestEncodingType.URL_ENCODED)]) -> Any:
    checked_form(request, data.csrf)
    response = Redirect("/", status_code=303)
    response.cookies.append(Cookie(key=SESSION_COOKIE, value="", max_age=0, path="/", httponly=True, samesite="lax"))
    return response


class RegisterForm(msgspec.Struct):
    name: Annotated[str, msgspec.Meta(max_length=64)] = ""
    invite: Annotated[str, msgspec.Meta(max_length=256)] = ""
    csrf: Annotated[str, msgspec.Meta(max_length=128)] = ""


@post("/register", include_in_schema=False, sync_to_thread=True)
def register(request: Request, data: Annotated[RegisterForm, Body(media_type=RequestEncodingType.URL_ENCODED)]) -> Template:
    part = part_of(request)
    check_login_form(request, data.csrf)
    if part.competition.invite_code is None:
        raise NotFound("this competition has no self-registration (the organiser adds teams)")
    client = request.client.host if request.client else "?"
    wait = part.failed_auth.retry_after(client, count=False)
    if wait is not None:
        raise TooMany(detail=f"too many failed attempts from {client}: try again in {wait} s", headers={"retry-after": str(wait)})
    try:
        team, token = part.teams.register(data.name.strip(), data.invite)
    except Forbidden:
        part.failed_auth.count(client)
        raise
    response = page(request, "registered.html", new_team=team.name, token=token)
    response.headers["cache-control"] = "no-store"
    return response


# -- a team's own page ----------------------------------------------------------------------


def team_figures(part: TeamsPart, request: Request, viewer: Viewer) -> dict[str, Any]:
    subs = part.submissions.for_team(viewer.id)
    bots = sorted({s.bot_name for s in subs if s.bot_name})
    data = data_of(request)
    games: list[dict[str, Any]] = []
    try:
        tid = data.tournament_id(None)
        for bot in bots:
            games += data.recent_games(tid, limit=50, bot=bot)
    except Exception:  # no tournament yet: no games to list
        games = []
    own = set(bots)
    faults = [
        {**g, "own_faults": sum(s["faults"] for s in g["seats"] if s["bot"] in own)}
        for g in sorted(games, key=lambda g: g["finished"], reverse=True)
    ]
    return {
        "team": {"id": viewer.id, "name": viewer.name, "is_admin": viewer.is_admin},
        "bots": bots,
        "submissions": [submission_doc(s) for s in subs],
        "challenges": [c.to_dict() for c in part.ladder.challenges(viewer.id)],
        "games": faults,
    }


@get("/team", include_in_schema=False, sync_to_thread=True)
def team_page(request: Request) -> Template:
    part = part_of(request)
    viewer = part.page_viewer(request)
    figures = team_figures(part, request, viewer)
    return page(request, "team.html", me=figures, team=viewer, live=True, competition=part.competition,
                challenge_form=bool(figures["bots"]))


@get("/api/team", tags=["teams"], summary="The asking team's page", sync_to_thread=True)
def api_team(request: Request) -> dict[str, Any]:
    """The asking team, its submissions (status, reason), its challenges, and its bot's recent
    games with the faults of its own seats."""
    part = part_of(request)
    return team_figures(part, request, part.api_viewer(request))


@get("/team/submissions/{submission_id:int}", include_in_schema=False, sync_to_thread=True)
def submission_page(request: Request, submission_id: int) -> Template:
    part = part_of(request)
    viewer = part.page_viewer(request)
    sub = submission_doc(part.submission_for(viewer, submission_id))
    return page(request, "submission.html", sub=sub, team=viewer, live=sub["status"] not in ("accepted", "rejected"))


class UploadForm(msgspec.Struct):
    archive: UploadFile
    csrf: str = ""


def _submit(part: TeamsPart, viewer: Viewer, upload: UploadFile | None) -> Any:
    if upload is None or not isinstance(upload, UploadFile):
        raise UploadRefused("no file in the form's field `archive`")
    team = part.team_by_id(viewer.id)
    if team is None:
        raise NotAuthorizedException(detail="this team's token was revoked")
    name = (upload.filename or "archive").rsplit("/", 1)[-1].rsplit("\\", 1)[-1][:200]
    return part.submissions.submit(team, name, upload.file)


@post("/team/submissions", include_in_schema=False, sync_to_thread=True)
def upload_form(request: Request, data: Annotated[dict[str, Any], Body(media_type=RequestEncodingType.MULTI_PART)]) -> Any:
    part = part_of(request)
    viewer = checked_form(request, data.get("csrf") if isinstance(data.get("csrf"), str) else "")
    sub = _submit(part, viewer, data.get("archive"))
    return Redirect(f"/team/submissions/{sub.id}", status_code=303)


@post("/api/submissions", tags=["teams"], summary="Upload a bot", status_code=201, sync_to_thread=True)
def api_submit(
    request: Request, data: Annotated[dict[str, Any], Body(media_type=RequestEncodingType.MULTI_PART)]
) -> dict[str, Any]:
    """Upload a bot folder as a .zip or .tar.gz in the multipart field `archive`
    (`Authorization: Bearer TOKEN`). Returns the new submission (`id`, `status`: `queued`);
    its validation goes on in the ladder process: poll `GET /api/submissions/{id}`."""
    part = part_of(request)
    viewer = part.api_viewer(request, cookie_too=False)
    return submission_doc(_submit(part, viewer, data.get("archive")))


@get("/api/submissions", tags=["teams"], summary="The asking team's submissions", sync_to_thread=False)
def api_submissions(request: Request) -> dict[str, Any]:
    part = part_of(request)
    viewer = part.api_viewer(request)
    return {"submissions": [submission_doc(s) for s in part.submissions.for_team(viewer.id)]}


@get("/api/submissions/{submission_id:int}", tags=["teams"], summary="One submission", sync_to_thread=True)
def api_submission(request: Request, submission_id: int) -> dict[str, Any]:
    """`status` (queued, building, validating, accepted, rejected), `reason` (when rejected),
    `report` (the validation report), `build_log`. Only for the team that sent it and the
    admin: 401 without a token, 404 with another team's."""
    part = part_of(request)
    return submission_doc(part.submission_for(part.api_viewer(request), submission_id))


# -- challenges -----------------------------------------------------------------------------


class ChallengeBody(msgspec.Struct):
    opponents: Annotated[list[Annotated[str, msgspec.Meta(max_length=200)]], msgspec.Meta(min_length=1, max_length=4)]
    games: Annotated[int, msgspec.Meta(ge=1, le=10_000)]


def _challenge(part: TeamsPart, viewer: Viewer, opponents: list[str], games: int) -> Any:
    team = part.team_by_id(viewer.id)
    if team is None:
        raise NotAuthorizedException(detail="this team's token was revoked")
    return part.ladder.challenge(team, opponents, games)


@get("/api/challenges", tags=["teams"], summary="The asking team's challenges", sync_to_thread=False)
def api_challenges(request: Request) -> dict[str, Any]:
    """The asking team's challenges, newest first: `opponents`, `games`, `played`, `status`
    (queued, playing, done, failed) and the `tournament` their games are recorded in."""
    part = part_of(request)
    viewer = part.api_viewer(request)
    return {"challenges": [c.to_dict() for c in part.ladder.challenges(viewer.id)]}


@post("/api/challenges", tags=["teams"], summary="Ask for unranked games", status_code=201, sync_to_thread=True)
def api_challenge(request: Request, data: ChallengeBody) -> dict[str, Any]:
    """JSON `{"opponents": [...], "games": N}`: up to four opponents (teams or bot names) and a
    number of unranked games of the asking team's bot against them, played before ranked
    games and never rated. Capped per team and hour (429 with `Retry-After`)."""
    part = part_of(request)
    viewer = part.api_viewer(request, cookie_too=False)
    return _challenge(part, viewer, data.opponents, data.games).to_dict()


class ChallengeForm(msgspec.Struct):
    opponents: Annotated[str, msgspec.Meta(max_length=1000)] = ""
    games: Annotated[str, msgspec.Meta(max_length=10)] = ""
    csrf: Annotated[str, msgspec.Meta(max_length=128)] = ""


@post("/team/challenges", include_in_schema=False, sync_to_thread=True)
def challenge_form(request: Request, data: Annotated[ChallengeForm, Body(media_type=RequestEncodingType.URL_ENCODED)]) -> Any:
    part = part_of(request)
    viewer = checked_form(request, data.csrf)
    opponents = [o.strip() for o in data.opponents.replace(",", " ").split() if o.strip()]
    if not 1 <= len(opponents) <= 4:
        raise HTTPException(status_code=400, detail="opponents: name one to four bots or teams, separated by commas")
    try:
        games = int(data.games)
    except ValueError:
        raise HTTPException(status_code=400, detail=f"games: {data.games[:10]!r} is not a number") from None
    _challenge(part, viewer, opponents, games)
    return Redirect("/team", status_code=303)


def login_redirect(request: Request, exc: Exception) -> Response[Any]:
    return Redirect("/login", status_code=303)


ROUTES = [
    # (the handler that runs in the loop first, for each path that has two: see login_page)
    login_page, login, logout, register, team_page, api_team, submission_page, upload_form, api_submissions,
    api_submit, api_submission, api_challenges, api_challenge, challenge_form,
]
