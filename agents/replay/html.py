"""One self-contained HTML page per run: a readable chat, code highlighted by pygments, outputs collapsible."""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path
from typing import Any

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import TextLexer, get_lexer_by_name
from pygments.util import ClassNotFound

from agents.feedback.figures import describe
from agents.loop.codeblocks import segments
from agents.loop.roles import MODEL_ROLES
from agents.record.changes import changes_title, line_kinds, shown_diff
from agents.record.display import run_label
from agents.record.run_folder import DIFF_FILE, workspace_name
from agents.replay.show import message_time, model_label, parse_time, roles_label, sandbox_label, totals_label
from agents.replay.timeline import attempt_label, candidate_label, candidates_label, rejected_label, timeline
from agents.sandbox.servers import server_line

CSS_FILE = Path(__file__).with_name("page.css")
SIDE = {**dict.fromkeys(MODEL_ROLES, "left"), "task": "right", "human": "right", "execution": "right",
        "user_proxy": "right"}
INLINE_CODE = re.compile(r"`([^`\n]+)`")


def esc(value: Any) -> str:
    """HTML-escaped text."""
    return html.escape(str(value), quote=True)


def code_html(code: str, language: str) -> str:
    """A highlighted code block (inline styles come from the page's .hl CSS)."""
    try:
        lexer = get_lexer_by_name(language or "python")
    except ClassNotFound:
        lexer = TextLexer()
    body = highlight(code, lexer, HtmlFormatter(cssclass="hl", nowrap=False))
    return f'<div class="code" data-language="{esc(language or "python")}">{body}</div>'


def text_html(text: str) -> str:
    """Prose with `inline code`; line breaks kept by CSS."""
    escaped = INLINE_CODE.sub(r"<code>\1</code>", esc(text.strip("\n")))
    return f'<div class="text">{escaped}</div>' if escaped.strip() else ""


def content_html(content: str | None) -> str:
    """Message text with its fenced blocks highlighted (the blocks agents/loop/codeblocks.py finds: `segments`)."""
    if not content:
        return '<div class="text empty">(empty)</div>'
    return "".join(code_html(s.text, s.language) if s.fence else text_html(s.text) for s in segments(content))


IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
               ".svg": "image/svg+xml"}
IMAGE_MAX = 8 << 20
"""The largest image put into a page (as a data: URI, so the page stays one self-contained file)."""


def data_uri(workspace: Path, rel: str) -> str | None:
    """An image of the workspace as a data: URI; None when it is not there, not an image, too big, or outside."""
    base = workspace.resolve()
    path = (workspace / rel).resolve()
    kind = IMAGE_TYPES.get(path.suffix.lower())
    if kind is None or not path.is_relative_to(base) or not path.is_file() or path.stat().st_size > IMAGE_MAX:
        return None
    return f"data:{kind};base64,{base64.b64encode(path.read_bytes()).decode()}"


def figures_html(e: dict[str, Any], workspace: Path | None) -> str:
    """The images an execution made, each with a caption (file, size, titles)."""
    items = []
    for figure in e.get("figures") or []:
        src = data_uri(workspace, str(figure.get("path", ""))) if workspace is not None else None
        image = (f'<img src="{esc(src)}" alt="{esc(figure.get("title") or figure.get("path"))}">' if src else
                 '<p class="missing">(the image is no longer in the run folder)</p>')
        items.append(f'<figure class="figure" data-path="{esc(figure.get("path"))}">{image}'
                     f'<figcaption>{esc(describe(figure))}</figcaption></figure>')
    return "".join(items)


def table_html(table: dict[str, Any] | None) -> str:
    """A DataFrame or Series value as a table (its first rows and columns), every cell escaped."""
    if not table:
        return ""
    shape = table.get("shape") or [len(table.get("rows") or []), len(table.get("columns") or [])]
    rows, columns = table.get("rows") or [], table.get("columns") or []
    shown = "" if len(rows) >= shape[0] and len(columns) >= shape[1] else \
        f" (the first {len(rows)} rows and {len(columns)} columns)"
    head = "<tr><th></th>" + "".join(f"<th>{esc(c)}</th>" for c in columns) + "</tr>"
    body = "".join(f"<tr><th>{esc(i)}</th>" + "".join(f"<td>{esc(v)}</td>" for v in row) + "</tr>"
                   for i, row in zip(table.get("index") or [], rows))
    return (f'<div class="value-table" data-kind="{esc(table.get("kind"))}"><table><caption>{esc(table.get("kind"))} '
            f'· {esc(shape[0])} × {esc(shape[1])}{esc(shown)}</caption><thead>{head}</thead><tbody>{body}</tbody>'
            f'</table></div>')


def execution_html(e: dict[str, Any], workspace: Path | None = None) -> str:
    """One execution: a status line, then its output in a <details> (open when it failed), then the table its last
    expression gave and the figures it made (read from `workspace`, the attempt's folder in the run)."""
    # a command-line tool run bare printed its usage; a server was stopped as servers are
    ok = e.get("exit_code") == 0 or bool(e.get("usage")) or bool(e.get("server"))
    flags = [f.replace("_", " ") for f in ("timed_out", "truncated", "oom_killed", "disk_full", "sandbox_lost", "usage")
             if e.get(f)]
    output = e.get("output") or ""
    lines = output.count("\n") + (1 if output and not output.endswith("\n") else 0)
    head = (f'<span class="mark">{"✔" if ok else "✘ FAILED"}</span> {esc(run_label(e))} · '
            f'exit {esc(e.get("exit_code"))} · {float(e.get("duration_s") or 0):.2f} s'
            + "".join(f' <span class="flag">{esc(f)}</span>' for f in flags)
            + (f' <span class="flag server">{esc(server_line(e["server"]))}</span>' if e.get("server") else ""))
    return (f'<div class="exec {"ok" if ok else "failed"}" data-exit="{esc(e.get("exit_code"))}">'
            f'<div class="exec-head" data-language="{esc(e.get("language") or "python")}">{head}</div>'
            f'<details class="output"{"" if ok else " open"}><summary>output ({lines} line'
            f'{"" if lines == 1 else "s"})</summary><pre>{esc(output) or "(no output)"}</pre></details>'
            f'{table_html(e.get("table"))}{figures_html(e, workspace)}</div>')


def not_run_html(languages: list[str]) -> str:
    """The reply's blocks that did not run (a language the sandbox does not run)."""
    items = "".join(f'<li>```{esc(lang)} block not run (not a language the sandbox runs)</li>' for lang in languages)
    return f'<ul class="not-run">{items}</ul>' if items else ""


def checks_html(checks: list[dict[str, Any]], workspace: Path | None = None) -> str:
    """The acceptance checks of a turn, passed or failed, with the images they made (a page check's screenshot,
    read from `workspace`)."""
    if not checks:
        return ""
    items = []
    for c in checks:
        detail = f'<div class="detail">{esc(c["detail"])}</div>' if c.get("detail") else ""
        verdict = ("pass", "✔") if c.get("passed") else ("fail", "✘")
        items.append(f'<li class="{verdict[0]}">{verdict[1]} {esc(c.get("name"))}{detail}'
                     f'{figures_html(c, workspace)}</li>')
    return f'<ul class="checks">{"".join(items)}</ul>'


def message_html(m: dict[str, Any], started: Any, run: Path | None = None) -> str:
    """One chat bubble (`run`: the run folder, where the figures of its executions are)."""
    role = m.get("role", "user_proxy")
    meta = [esc(m.get("sender", "?")), esc(role)]
    when = message_time(m, started)
    if when:
        meta.append(esc(when))
    usage = m.get("usage") or {}
    tokens = " · ".join(f"{k.replace('_tokens', '')} {v}" for k, v in usage.items()
                        if k in ("prompt_tokens", "completion_tokens") and v is not None)
    if tokens:
        meta.append(f'<span class="tokens">{esc(tokens)} tokens</span>')
    if usage.get("first_token_s") is not None:
        meta.append(f'<span class="tokens">first token after {esc(usage["first_token_s"])} s</span>')
    outcome = m.get("outcome") or {}
    failed = any(e.get("exit_code") != 0 for e in outcome.get("executions", []))
    if outcome.get("executions") or outcome.get("checks"):
        workspace = run / workspace_name(int(m.get("attempt") or 1)) if run is not None else None
        body = ("".join(execution_html(e, workspace) for e in outcome.get("executions", []))
                + checks_html(outcome.get("checks", []), workspace) + not_run_html(outcome.get("not_run", []))
                + f'<details class="feedback"><summary>reply sent to the assistant</summary>'
                  f'{content_html(m.get("content"))}</details>')
    else:
        body = content_html(m.get("content"))
    classes = f'msg {esc(role)} {SIDE.get(role, "right")}' + (" failed" if failed else "")
    return (f'<article class="{classes}" data-role="{esc(role)}" data-index="{esc(m.get("index", ""))}">'
            f'<header class="meta">{" · ".join(meta)}</header>{body}</article>')


def header_html(t: dict[str, Any]) -> str:
    """Scenario, model, status and totals."""
    scenario = t.get("scenario") or {}
    status = str(t.get("status", "?"))
    rows = [("model", model_label(t)), ("sandbox", sandbox_label(t)),
            ("human input", t.get("human_input_mode", "?")), ("started", t.get("started_at", "?")),
            ("ended", t.get("ended_at") or "?"), ("totals", totals_label(t)), ("run", t.get("run_dir", "?"))]
    rows += [("team", roles_label(t))] if roles_label(t) else []
    rows += [("warning", w) for w in t.get("warnings") or []]
    parent = t.get("parent")
    if parent:
        rows.append(("continues", f"{parent.get('run_dir', '?')} ({parent.get('messages', '?')} earlier messages)"))
    table = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in rows)
    note = ('<p class="warn">Recovered from events.jsonl: transcript.json was missing or unusable.</p>'
            if t.get("recovered_from_events") else "")
    return (f'<header class="run"><h1>{esc(scenario.get("name", "run"))}</h1>'
            f'<p class="desc">{esc(scenario.get("description", ""))}</p>'
            f'<p><span class="status {esc(status)}" id="status">{esc(status)}</span> '
            f'<span class="reason">{esc(t.get("reason", ""))}</span></p>'
            f'<table class="facts">{table}</table>{note}'
            f'<details class="task"><summary>task</summary><div class="text">{esc(scenario.get("task", ""))}</div>'
            f'</details></header>')


def changes_html(t: dict[str, Any]) -> str:
    """The kept attempt's changes.diff, each line escaped and coloured by kind; '' when the run changed nothing."""
    changed, lines, more = shown_diff(t)
    if not changed:
        return ""
    files = "".join(f'<li class="{esc(f.get("change"))}">{esc(f.get("change"))} {esc(f.get("path"))}</li>'
                    for f in changed)
    body = "".join(f'<span class="{kind or "ctx"}">{esc(line)}</span>\n'
                   for line, kind in zip(lines, line_kinds(lines)))
    note = f'<p class="more">… {more} more diff lines in {esc(DIFF_FILE)}</p>' if more else ""
    diff = f'<pre class="diff">{body}</pre>' if body else ""
    return (f'<section class="changes"><h2>{esc(changes_title(changed))}</h2><ul class="files">{files}</ul>'
            f'{diff}{note}</section>')


def page_css() -> str:
    """The run page's CSS with the code highlighting's."""
    return CSS_FILE.read_text(encoding="utf-8") + HtmlFormatter(style="friendly").get_style_defs(".hl")


def timeline_html(t: dict[str, Any]) -> str:
    """The conversation: attempts, messages (code, executions, checks) and rejected replies, every value escaped."""
    started = parse_time(t.get("started_at"))
    run = Path(t["run_dir"]) if t.get("run_dir") else None
    parts = []
    for kind, item in timeline(t):
        if kind == "attempt":
            parts.append(f'<h2 class="attempt" data-attempt="{esc(item.get("attempt", ""))}">'
                         f'{esc(attempt_label(item, t.get("chosen_attempt")))}</h2>')
        elif kind == "rejected":
            follow_up = f'<p class="follow-up">asked next: {esc(item["follow_up"])}</p>' \
                if item.get("follow_up") else ""
            parts.append(f'<details class="rejected" data-role="rejected"><summary>{esc(rejected_label(item))}'
                         f'</summary>{content_html(item.get("content"))}{follow_up}</details>')
        elif kind == "candidates":  # collapsed: the chosen one is the message that follows
            inner = "".join(f'<details class="candidate" data-role="candidate" '
                            f'data-chosen="{esc(bool(c.get("chosen")))}"><summary>{esc(candidate_label(c))}</summary>'
                            f'{content_html(c.get("content"))}{_candidate_output(c)}</details>'
                            for c in item["items"])
            parts.append(f'<details class="candidates" data-role="candidates"><summary>{esc(candidates_label(item))}'
                         f'</summary>{inner}</details>')
        else:
            parts.append(message_html(item, started, run))
    return "".join(parts)


def _candidate_output(event: dict[str, Any]) -> str:
    """What a candidate's run printed (its last block), escaped; '' when it did not run."""
    runs = (event.get("outcome") or {}).get("executions") or []
    if not runs:
        return ""
    return f'<pre class="output">{esc(runs[-1].get("output") or "(no output)")}</pre>'


def render_html(t: dict[str, Any]) -> str:
    """The whole page as a string (no external assets: CSS inline, images as data: URIs, no scripts, no fonts)."""
    css = page_css()
    scenario = (t.get("scenario") or {}).get("name", "run")
    messages = timeline_html(t)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>codeduet · {esc(scenario)} · {esc(t.get('status', '?'))}</title>"
            f"<style>{css}</style></head><body>{header_html(t)}"
            f'<main class="chat">{messages}</main>{changes_html(t)}'
            f'<footer>codeduet transcript {esc(t.get("format", ""))} · run {esc(t.get("run_id", ""))}</footer>'
            "</body></html>\n")


def write_html(t: dict[str, Any], path: Path) -> Path:
    """Write the page; returns its path."""
    path = Path(path)
    if path.parent and not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(t), encoding="utf-8")
    return path
