"""The ASGI application: :func:`create_app` puts the public pages, the teams' and the admin's
pages, the API (with its OpenAPI document at ``/api/schema/openapi.json``) and the static files
together, with the security headers on every response and errors as one clear message (JSON
under ``/api/``, a page elsewhere).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from litestar import Litestar, Request, Response, get
from litestar.contrib.jinja import JinjaTemplateEngine
from litestar.datastructures import State
from litestar.exceptions import HTTPException, NotFoundException, ValidationException
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import JsonRenderPlugin
from litestar.response import Template
from litestar.template.config import TemplateConfig
from litestar.types import Message

from arena import __version__
from arena.errors import ArenaError
from arena.text import LINE_LIMIT, printable
from arena.web import public
from arena.web.data import NotFoundError, PublicData, card_script
from arena.web.security import SECURITY_HEADERS

HERE = Path(__file__).parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"
REPORT_ASSETS = HERE.parent / "report" / "assets"
#: The static files by name: the site's own and the report's viewer (nothing else is served).
STATIC_FILES = {
    "site.css": (STATIC / "site.css", "text/css"),
    "live.js": (STATIC / "live.js", "text/javascript"),
    "report.css": (REPORT_ASSETS / "report.css", "text/css"),
    "common.js": (REPORT_ASSETS / "common.js", "text/javascript"),
    "viewer.js": (REPORT_ASSETS / "viewer.js", "text/javascript"),
}
#: A request body larger than this is refused before it is read (413), besides an upload's own cap.
DEFAULT_BODY_LIMIT = 1024 * 1024

log = logging.getLogger(__name__)


@get("/static/{name:str}", include_in_schema=False, sync_to_thread=False)
def static_file(name: str) -> Response[bytes | str]:
    if name == "cards.js":
        return Response(card_script(), media_type="text/javascript", headers={"cache-control": "public, max-age=300"})
    found = STATIC_FILES.get(name)
    if found is None:
        raise NotFoundError(f"no static file {name[:64]!r}")
    path, media = found
    return Response(path.read_bytes(), media_type=media, headers={"cache-control": "public, max-age=300"})


@get("/healthz", include_in_schema=False, sync_to_thread=False)
def health() -> dict[str, str]:
    return {"status": "ok"}


def _status_of(exc: Exception) -> tuple[int, str, dict[str, str]]:
    """The HTTP status, the one-line message and the extra headers of an error."""
    if isinstance(exc, HTTPException):
        detail = exc.detail
        if isinstance(exc, ValidationException) and exc.extra:
            parts = []
            for item in exc.extra if isinstance(exc.extra, list) else [exc.extra]:
                if isinstance(item, dict):
                    parts.append(f"{item.get('key') or item.get('source') or 'request'}: {item.get('message')}")
            if parts:
                detail = f"{detail}: {'; '.join(parts)}"
        return exc.status_code, str(detail), dict(exc.headers or {})
    status = getattr(exc, "http_status", None)
    if isinstance(exc, NotFoundError):
        status = 404
    headers = dict(getattr(exc, "http_headers", None) or {})
    return (status or 400), str(exc), headers


def error_response(request: Request, exc: Exception) -> Response[Any]:
    status, message, headers = _status_of(exc)
    mapped = getattr(request.app.state, "error_status", None)
    found = mapped(exc) if mapped is not None and not isinstance(exc, HTTPException) else None
    if found is not None:
        status, extra = found
        headers.update(extra)
    if status >= 500:
        log.error("%s %s: %s", request.method, request.url.path, message)
        message = "internal error (the server's log says more)"
    message = printable(message, limit=LINE_LIMIT)
    if request.url.path.startswith("/api/") or "application/json" in request.headers.get("accept", "") and "text/html" not in request.headers.get("accept", ""):
        return Response({"error": message, "status": status}, status_code=status, headers=headers)
    whoami = getattr(request.app.state, "whoami", None)
    try:
        team = whoami(request) if whoami is not None else None
    except Exception:  # an error page never fails for want of a session
        team = None
    return Template(
        template_name="error.html",
        context={"status": status, "message": message, "team": team, "title": request.app.state.title,
                 "site": request.app.state.title},
        status_code=status,
        headers=headers,
    )


def _unexpected(request: Request, exc: Exception) -> Response[Any]:
    log.exception("%s %s failed", request.method, request.url.path)
    return error_response(request, HTTPException(status_code=500, detail="internal error"))


async def _security_headers(message: Message, scope: Any) -> None:
    if message["type"] == "http.response.start":
        headers = list(message.get("headers", []))
        present = {k.lower() for k, _ in headers}
        for name, value in SECURITY_HEADERS.items():
            if name.encode() not in present:
                headers.append((name.encode(), value.encode()))
        message["headers"] = headers


def templates() -> TemplateConfig[JinjaTemplateEngine]:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True, lstrip_blocks=True,
    )
    env.filters["num"] = lambda v, digits=0: "–" if v is None else f"{v:.{digits}f}"
    env.filters["faults"] = lambda f: sum(f.values()) if isinstance(f, dict) else f
    return TemplateConfig(instance=JinjaTemplateEngine.from_environment(env))


def create_app(
    results: Path,
    competition: Any | None = None,
    *,
    refresh_s: float = 1.0,
) -> Litestar:
    """The web application over the results store in ``results``: the public pages, and with
    a ``competition`` (:func:`arena.competition.load_competition`) the teams' and the admin's.
    A request body larger than an upload may be (plus the form's own fields) is refused
    before it is read (413)."""
    data = PublicData(results, refresh_s=refresh_s)
    title = competition.name if competition is not None else "Sushi Go! Arena"
    state: dict[str, Any] = {"data": data, "results": results, "title": title}
    routes: list[Any] = [*public.ROUTES, static_file, health]
    handlers: dict[Any, Any] = {}
    body_limit = DEFAULT_BODY_LIMIT
    if competition is not None:
        from arena.web import admin, teams

        part = teams.TeamsPart(results, competition)
        state.update(
            teams=part, whoami=part.whoami, viewer=part.replay_viewer, error_status=teams.error_status,
        )
        routes += teams.ROUTES + admin.ROUTES
        handlers[teams.LoginNeeded] = teams.login_redirect
        body_limit = competition.upload_max_bytes + 64 * 1024
    return Litestar(
        route_handlers=routes,
        state=State(state),
        template_config=templates(),
        exception_handlers={ArenaError: error_response, HTTPException: error_response, NotFoundException: error_response,
                            **handlers, Exception: _unexpected},
        before_send=[_security_headers],
        openapi_config=OpenAPIConfig(
            title=title, version=__version__, path="/api/schema", render_plugins=[JsonRenderPlugin()],
            description="The competition server's API: the public leaderboard, bots and games, and for teams "
            "(Authorization: Bearer TOKEN) submissions and challenges.",
        ),
        request_max_body_size=body_limit,
        multipart_form_part_limit=16,
        on_shutdown=[data.close],
        logging_config=None,
        debug=False,
    )
