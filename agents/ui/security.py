"""Who may use the UI: a token when it listens beyond this machine, the same-origin rule and a CSRF token for every
POST, and a Host check against DNS rebinding when it listens on localhost."""

from __future__ import annotations

import hmac
import secrets
from typing import Any, Awaitable, Callable

from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}
TOKEN_COOKIE, CSRF_COOKIE, CSRF_FIELD = "codeduet_token", "codeduet_csrf", "csrf"


def is_local(host: str) -> bool:
    """Whether a bind address is this machine only."""
    return host in LOCAL_HOSTS


def csrf_token(request: Request) -> str:
    """The browser's CSRF token (set as a cookie by the page that renders a form)."""
    return request.cookies.get(CSRF_COOKIE) or request.state.new_csrf


async def check_csrf(request: Request) -> str | None:
    """None when a POST is same-origin and carries the browser's CSRF token; else why it is refused."""
    origin = request.headers.get("origin")
    if origin and origin.split("://", 1)[-1] != request.headers.get("host"):
        return "cross-site request refused"
    form = await request.form()
    sent, cookie = str(form.get(CSRF_FIELD) or ""), request.cookies.get(CSRF_COOKIE) or ""
    if not cookie or not hmac.compare_digest(sent, cookie):
        return "missing or wrong CSRF token: reload the page"
    return None


def guard(token: str | None, bind_host: str) -> Callable[..., Awaitable[Response]]:
    """HTTP middleware: the token (header `Authorization: Bearer`, the cookie, or `?token=` once, which sets the
    cookie), the Host check on a local bind, and a CSRF cookie for every browser."""

    async def middleware(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        host = (request.headers.get("host") or "").rsplit(":", 1)[0]
        if is_local(bind_host) and host not in LOCAL_HOSTS:
            return PlainTextResponse("unexpected Host header", status_code=400)
        if token:
            given = request.query_params.get("token")
            if given is not None and hmac.compare_digest(given, token):
                url = request.url.remove_query_params("token")
                response: Any = RedirectResponse(str(url), status_code=303)
                response.set_cookie(TOKEN_COOKIE, token, httponly=True, samesite="strict")
                return response
            bearer = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
            cookie = request.cookies.get(TOKEN_COOKIE, "")
            if not (hmac.compare_digest(bearer, token) or hmac.compare_digest(cookie, token)):
                return PlainTextResponse("401: this codeduet ui needs its token (?token=...)", status_code=401)
        request.state.new_csrf = secrets.token_urlsafe(24)
        response = await call_next(request)
        if not request.cookies.get(CSRF_COOKIE):
            response.set_cookie(CSRF_COOKIE, request.state.new_csrf, httponly=True, samesite="strict")
        return response

    return middleware
