"""`codeduet ui`: a local web app over the run folders (Starlette, server-rendered pages, a little plain JavaScript).

Pages: the runs (newest first, filtered, paged), a run (its timeline, live over server-sent events that follow its
events.jsonl, with the reply streaming in and the steering prompt of a run started from here), a new run, two runs
compared, and the replay actions. Every page has its own URL; every asset is packaged.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import zipfile
from pathlib import Path
from typing import Any, AsyncIterator

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from agents.loop.codeblocks import extract_code_blocks
from agents.loop.errors import BadInputError, CodeduetError
from agents.loop.status import STATUSES as RUN_STATUSES
from agents.record.changes import diff_trees, workspace_files
from agents.record.run_folder import EVENTS, LIVE_FILE, PROMPT_FILE, workspace_name, write_answer
from agents.record.transcript import load_transcript
from agents.replay.html import changes_html, content_html, esc, header_html, page_css, render_html, timeline_html
from agents.replay.resume import kept_attempt
from agents.scenario.spec import load_scenario
from agents.ui.launch import Launcher
from agents.ui.runs import SEGMENT, RunIndex, is_alive, run_path
from agents.ui.security import CSRF_FIELD, check_csrf, csrf_token, guard
from agents.ui.typed import NAME as TYPED_NAME
from agents.ui.typed import PRESET_CHOICES, TYPED_FIELDS, typed_scenario, uploaded_files, write_typed

STATIC = Path(__file__).parent / "static"
STATUSES = ("running", *RUN_STATUSES)
"""The runs page's status filter: a run not finished yet, then every status a finished one may have."""
POLL_S = 0.1


class UI:
    """The app's state: the workspaces root, the run index, the background jobs, the templates."""

    def __init__(self, root: Path, scenarios: Path, logs: Path):
        self.root, self.scenarios = Path(root), Path(scenarios)
        self.index = RunIndex(self.root)
        self.launcher = Launcher(self.root, logs)
        self.env = Environment(loader=PackageLoader("agents.ui", "templates"), autoescape=select_autoescape(),
                               trim_blocks=True, lstrip_blocks=True)
        self.env.globals["presets"] = PRESET_CHOICES  # the task box's preset menu

    def page(self, request: Request, name: str, status_code: int = 200, **values: Any) -> HTMLResponse:
        html = self.env.get_template(name).render(csrf=csrf_token(request), csrf_field=CSRF_FIELD,
                                                  request=request, **values)
        return HTMLResponse(html, status_code=status_code)

    def run_or_404(self, request: Request) -> Path:
        path = run_path(self.root, request.path_params["scenario"], request.path_params["run_id"])
        if path is None:
            raise NotFound()
        return path

    def scenario_files(self) -> list[Path]:
        return sorted(self.scenarios.glob("*.yaml")) if self.scenarios.is_dir() else []

    def models(self) -> list[str]:
        try:
            from agents.models.config import load_models_file

            table, _, _ = load_models_file()
            return sorted(table.models)
        except CodeduetError:
            return []


class NotFound(Exception):
    """A run id or path the URL names does not exist (or is not allowed): 404."""


def create_app(root: Path, *, token: str | None = None, host: str = "127.0.0.1", scenarios: Path | None = None,
               logs: Path | None = None) -> Starlette:
    """The ASGI app for the runs under `root`: the routes below, over the state in `app.state.ui`."""
    ui = UI(root, scenarios or Path("scenarios"), logs or Path(root) / ".ui-logs")
    app = Starlette(routes=ROUTES, exception_handlers={NotFound: not_found, 404: not_found}, lifespan=lifespan,
                    middleware=[Middleware(BaseHTTPMiddleware, dispatch=guard(token, host))])
    app.state.ui = ui
    return app


@contextlib.asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    yield
    app.state.ui.launcher.stop_all()  # runs started from the page get Ctrl-C: they save everything


def ui_of(request: Request) -> UI:
    """The app's state (create_app)."""
    return request.app.state.ui


async def runs_page(request: Request) -> Response:
    ui = ui_of(request)
    q = request.query_params
    status = q.get("status") if q.get("status") in STATUSES else None
    scenario = q.get("scenario") if q.get("scenario") and SEGMENT.fullmatch(q.get("scenario", "")) else None
    page = int(q.get("page") or 1) if (q.get("page") or "1").isdigit() else 1
    rows, total = await asyncio.to_thread(ui.index.page, status, scenario, page)
    pages = max(1, -(-total // 50))
    return ui.page(request, "runs.html", rows=rows, total=total, page=page, pages=pages, status=status,
                   scenario=scenario, statuses=STATUSES, scenarios=ui.index.scenarios(), root=ui.root)


async def run_page(request: Request) -> Response:
    ui = ui_of(request)
    run = ui.run_or_404(request)
    job = ui.launcher.job_for(run)
    return ui.page(request, "run.html", run=ui.index.row(run), css=Markup(page_css()),
                   body=Markup(await asyncio.to_thread(run_body, run)), can_stop=bool(job and not job.done))


async def timeline(request: Request) -> Response:
    ui = ui_of(request)
    run = ui.run_or_404(request)
    return HTMLResponse(await asyncio.to_thread(run_body, run))


async def run_events(request: Request) -> Response:
    ui = ui_of(request)
    run = ui.run_or_404(request)
    start = request.headers.get("last-event-id") or request.query_params.get("offset") or "0"
    return StreamingResponse(follow(request, run, int(start) if start.isdigit() else 0),
                             media_type="text/event-stream", headers={"Cache-Control": "no-store"})


async def answer(request: Request) -> Response:
    ui = ui_of(request)
    run = ui.run_or_404(request)
    if (problem := await check_csrf(request)) is not None:
        return PlainTextResponse(problem, status_code=403)
    form = await request.form()
    n, choice = str(form.get("n") or ""), str(form.get("choice") or "")
    if not n.isdigit() or choice not in ("execute", "skip", "end", "reply"):
        return PlainTextResponse("bad answer", status_code=400)
    if not write_answer(run, n, {"choice": choice, "text": str(form.get("text") or "")}):  # the first one wins
        return PlainTextResponse("already answered (in another tab?)", status_code=409)
    return RedirectResponse(f"/run/{run.parent.name}/{run.name}", status_code=303)


async def stop(request: Request) -> Response:
    ui = ui_of(request)
    run = ui.run_or_404(request)
    if (problem := await check_csrf(request)) is not None:
        return PlainTextResponse(problem, status_code=403)
    job = ui.launcher.job_for(run)
    if job is None or not ui.launcher.stop(job):
        return PlainTextResponse("this run was not started from this page, or it has ended", status_code=409)
    return RedirectResponse(f"/run/{run.parent.name}/{run.name}", status_code=303)


async def new_page(request: Request) -> Response:
    ui = ui_of(request)
    return ui.page(request, "new.html", scenarios=ui.scenario_files(), models=ui.models(), error=None)


async def new_run(request: Request) -> Response:
    ui = ui_of(request)
    if (problem := await check_csrf(request)) is not None:
        return PlainTextResponse(problem, status_code=403)
    form = await request.form()
    files = {p.name: p for p in ui.scenario_files()}
    chosen = files.get(str(form.get("scenario") or ""))
    model = str(form.get("model") or "") or None
    attempts = str(form.get("attempts") or "")
    human = str(form.get("human") or "never")
    if chosen is None or (model and model not in ui.models()) or (attempts and not attempts.isdigit()) \
            or human not in ("never", "always", "terminate"):
        return ui.page(request, "new.html", 400, scenarios=ui.scenario_files(), models=ui.models(),
                       error="pick a scenario from the list, a model from the table and a number of attempts")
    try:
        name = load_scenario(chosen).name or chosen.stem
    except CodeduetError as exc:
        return ui.page(request, "new.html", 400, scenarios=ui.scenario_files(), models=ui.models(), error=str(exc))
    job = await asyncio.to_thread(ui.launcher.start_run, chosen, name, model, int(attempts) if attempts else None,
                                  human)
    if job.run is None:
        return RedirectResponse(f"/job/{job.id}", status_code=303)
    return RedirectResponse(f"/run/{job.run.parent.name}/{job.run.name}", status_code=303)


TYPED_LOCK = asyncio.Lock()


async def new_task(request: Request) -> Response:
    """A typed task: its scenario (agents/ui/typed.py), the run, then its live page."""
    ui = ui_of(request)
    if (problem := await check_csrf(request)) is not None:
        return PlainTextResponse(problem, status_code=403)
    form = await request.form()
    fields = {k: str(form.get(k) or "") for k in TYPED_FIELDS}
    human = str(form.get("human") or "never")
    try:
        if human not in ("never", "always", "terminate") or fields["session"] not in ("", "kernel", "process"):
            raise BadInputError("pick who steers and the session from the lists")
        data = typed_scenario(fields, await uploaded_files(form), ui.models())
        path = await asyncio.to_thread(write_typed, ui.root, data)
    except CodeduetError as exc:
        return ui.page(request, "new.html", 400, scenarios=ui.scenario_files(), models=ui.models(), error=str(exc),
                       typed=fields)
    async with TYPED_LOCK:  # typed tasks share a scenario name: one starts at a time, so each finds its own folder
        job = await asyncio.to_thread(ui.launcher.start_run, path, TYPED_NAME, None, None, human, True)
    if job.run is None:
        return RedirectResponse(f"/job/{job.id}", status_code=303)
    return RedirectResponse(f"/run/{job.run.parent.name}/{job.run.name}", status_code=303)


async def replay_action(request: Request) -> Response:
    ui = ui_of(request)
    run = ui.run_or_404(request)  # a bad run id is 404 whatever the method
    if request.method != "POST" or request.path_params["action"] not in ("execute", "resume"):
        return PlainTextResponse("404: no such page", status_code=404)
    if (problem := await check_csrf(request)) is not None:
        return PlainTextResponse(problem, status_code=403)
    form = await request.form()
    job = ui.launcher.replay(run, request.path_params["action"], str(form.get("message") or "") or None)
    return RedirectResponse(f"/job/{job.id}", status_code=303)


async def job_page(request: Request) -> Response:
    ui = ui_of(request)
    job = ui.launcher.jobs.get(request.path_params["job_id"])
    if job is None:
        raise NotFound()
    return ui.page(request, "job.html", job=job, output=job.output())


async def job_log(request: Request) -> Response:
    ui = ui_of(request)
    job = ui.launcher.jobs.get(request.path_params["job_id"])
    if job is None:
        raise NotFound()
    return Response(json.dumps({**ui.launcher.describe(job), "output": job.output()}),
                    media_type="application/json")


async def export_html(request: Request) -> Response:
    ui = ui_of(request)
    run = ui.run_or_404(request)
    page = await asyncio.to_thread(lambda: render_html(load_transcript(run)))
    return HTMLResponse(page, headers={"Content-Disposition": f'attachment; filename="{run.name}.html"'})


async def download_zip(request: Request) -> Response:
    ui = ui_of(request)
    run = ui.run_or_404(request)
    data = await asyncio.to_thread(zip_folder, run)
    return Response(data, media_type="application/zip",
                    headers={"Content-Disposition": f'attachment; filename="{run.name}.zip"'})


async def compare(request: Request) -> Response:
    ui = ui_of(request)
    a, b = (request.query_params.get(k, "") for k in ("a", "b"))
    runs = [run_path(ui.root, *v.split("/", 1)) if v.count("/") == 1 else None for v in (a, b)]
    if not a or not b:
        return ui.page(request, "compare_pick.html", a=a, b=b)
    if None in runs:
        raise NotFound()
    data = await asyncio.to_thread(compare_runs, runs[0], runs[1])
    return ui.page(request, "compare.html", a=ui.index.row(runs[0]), b=ui.index.row(runs[1]), **data)


async def not_found(request: Request, exc: Exception) -> Response:
    return PlainTextResponse("404: no such run or page", status_code=404)


RUN = "/run/{scenario}/{run_id}"
ROUTES = [Route("/", runs_page), Route(RUN, run_page), Route(f"{RUN}/timeline", timeline),
          Route(f"{RUN}/events", run_events), Route(f"{RUN}/answer", answer, methods=["POST"]),
          Route(f"{RUN}/stop", stop, methods=["POST"]), Route(f"{RUN}/export.html", export_html),
          Route(f"{RUN}/download.zip", download_zip),
          Route(f"{RUN}/{{action}}", replay_action, methods=["GET", "POST"]),
          Route("/new", new_page), Route("/new", new_run, methods=["POST"]),
          Route("/new/task", new_task, methods=["POST"]), Route("/compare", compare),
          Route("/job/{job_id}", job_page), Route("/job/{job_id}/log", job_log),
          Mount("/static", StaticFiles(directory=str(STATIC)), name="static")]


def run_body(run: Path) -> str:
    """The run's header, timeline and changes, as the HTML export shows them (every value escaped)."""
    try:
        t = load_transcript(run)
    except CodeduetError as exc:  # a run that has only just started, or a damaged folder
        return f'<p class="error" id="unreadable">{esc(exc)}</p><main class="chat" id="timeline"></main>'
    if t.get("recovered_from_events") and is_alive(t.get("process")):  # not interrupted: still going
        t = {**t, "status": "running", "reason": "in progress", "recovered_from_events": False}
    return header_html(t) + f'<main class="chat" id="timeline">{timeline_html(t)}</main>' + changes_html(t)


async def follow(request: Request, run: Path, offset: int) -> AsyncIterator[str]:
    """Server-sent events for a run: `ev` for every new line of events.jsonl (its id is the byte offset after it,
    so a reconnect resumes there), `prompt` when a person is asked (or no longer), `tokens` with the reply being
    generated, and `end` once the run ended."""
    events, prompt_file, live_file = run / EVENTS, run / PROMPT_FILE, run / LIVE_FILE
    last_prompt, last_live, ended = None, None, False
    yield "retry: 1000\n\n"
    while not await request.is_disconnected():
        try:
            size = events.stat().st_size
        except OSError:
            size = 0
        if size > offset:
            with open(events, "rb") as fh:
                fh.seek(offset)
                chunk = fh.read(size - offset)
            complete = chunk[:chunk.rfind(b"\n") + 1]
            for line in complete.splitlines():
                offset += len(line) + 1
                text = line.decode("utf-8", errors="replace")
                ended = ended or '"type": "end"' in text
                yield f"id: {offset}\nevent: ev\ndata: {text}\n\n"
        prompt = _read(prompt_file)
        if prompt != last_prompt:
            last_prompt = prompt
            yield f"event: prompt\ndata: {json.dumps(prompt_view(prompt))}\n\n"
        live = _read(live_file)
        if live != last_live:
            last_live = live
            yield f"event: tokens\ndata: {json.dumps(live or '')}\n\n"
        if ended:
            yield "event: end\ndata: {}\n\n"
            return
        await asyncio.sleep(POLL_S)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return None


def prompt_view(raw: str | None) -> dict[str, Any] | None:
    """What the steering panel shows: the question's number, what Enter does, whether skip applies, and the
    proposed reply rendered as the timeline renders it (escaped)."""
    if not raw:
        return None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError:
        return None
    return {"n": data.get("n"), "enter": data.get("enter"), "can_skip": bool(data.get("can_skip")),
            "html": content_html(data.get("proposed") or "")}


def zip_folder(run: Path) -> bytes:
    """The run folder as a zip (regular files only; links are never followed)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(run.rglob("*")):
            if path.is_file() and not path.is_symlink():
                zf.write(path, f"{run.name}/{path.relative_to(run).as_posix()}")
    return buf.getvalue()


def compare_runs(a: Path, b: Path) -> dict[str, Any]:
    """Two runs side by side: the code of each turn aligned, and a diff of their kept attempts' workspaces."""
    ta, tb = load_transcript(a), load_transcript(b)

    def turns(t: dict[str, Any]) -> list[str]:
        chosen = kept_attempt(t)
        return ["\n\n".join(b.code for b in extract_code_blocks(m.get("content")))
                for m in t.get("messages") or [] if m.get("role") == "assistant" and (m.get("attempt") or 1) == chosen]

    ca, cb = turns(ta), turns(tb)
    rows = [(i + 1, ca[i] if i < len(ca) else None, cb[i] if i < len(cb) else None)
            for i in range(max(len(ca), len(cb)))]
    wa, wb = (r / workspace_name(kept_attempt(t)) for r, t in ((a, ta), (b, tb)))
    diff, changed = diff_trees(workspace_files(wa) if wa.is_dir() else {}, workspace_files(wb) if wb.is_dir() else {})
    return {"turn_rows": rows, "diff_lines": diff.splitlines(), "changed": changed}
