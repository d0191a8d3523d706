"""The `http:` check inside the sandbox (agents/scenario/check_http.py): start the server command, wait for its port,
send the
listed requests in order, compare each answer with what is expected, stop the server's whole process group, and
print one line: MARKER and a JSON verdict. Standard library only; loopback only (the container has no network).

Usage: python3 http_check.py SPEC_JSON (the check's options, as agents/scenario/check_http.py dumps them).
"""

import html
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from http.client import HTTPConnection

MARKER = "CODEDUET_HTTP_CHECK "
LOG_LIMIT = 256 * 1024
"""Bytes of the server's log kept (its tail is what the report quotes)."""
BODY_LIMIT = 1 << 20
"""Bytes of an answer's body read."""
SHOWN = 160
"""Characters of an actual body quoted in the report (its whitespace squeezed)."""


class Log:
    """The server's output (stdout and stderr), read by a thread, its tail kept."""

    def __init__(self, stream):
        self.data = b""
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream):
        for chunk in iter(lambda: stream.read1(65536), b""):
            self.data = (self.data + chunk)[-LOG_LIMIT:]

    def text(self):
        return self.data.decode("utf-8", errors="replace")


def connects(port):
    """Whether something accepts connections on the loopback port (IPv4, then IPv6)."""
    for host in ("127.0.0.1", "::1"):
        try:
            socket.create_connection((host, port), timeout=0.5).close()
            return host
        except OSError:
            continue
    return None


def stop(proc):
    """Stop the server's process group: TERM, then KILL what is left after a second."""
    for sig, wait in ((signal.SIGTERM, 1.0), (signal.SIGKILL, 1.0)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(wait)
            if sig == signal.SIGTERM:
                os.killpg(proc.pid, signal.SIGKILL)  # its children, if the leader went first
            return
        except subprocess.TimeoutExpired:
            continue
        except (ProcessLookupError, PermissionError):
            return


def pids():
    """The ids of every process in the sandbox."""
    return {int(name) for name in os.listdir("/proc") if name.isdigit()}


def stop_new(before):
    """Inside the sandbox (never on the host): kill every process that appeared while the check ran, but this one:
    what the server started and moved out of its process group (a worker that called setsid, a fork bomb in a
    request handler) must not outlive the check."""
    for _ in range(20):
        new = pids() - before - {os.getpid()}
        if not new:
            return
        for pid in new:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.05)


def encode(request):
    """(body bytes or None, headers) of a request: json, form or raw body; a content type unless one is given."""
    headers = dict(request.get("headers") or {})
    given = {k.lower() for k in headers}
    body, kind = None, None
    if request.get("json") is not None:
        body, kind = json.dumps(request["json"]).encode(), "application/json"
    elif request.get("form") is not None:
        body, kind = urllib.parse.urlencode(request["form"]).encode(), "application/x-www-form-urlencoded"
    elif request.get("body") is not None:
        body, kind = str(request["body"]).encode(), "text/plain; charset=utf-8"
    if kind and "content-type" not in given:
        headers["Content-Type"] = kind
    return body, headers


def subset(expected, actual, where="$"):
    """None when `expected` is a subset of `actual` (dicts: the listed keys; lists: same length, each item a subset;
    else equal, a bool never equal to a number), else where and how they differ."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"{where}: expected an object, got {shown(actual)}"
        for key, value in expected.items():
            if key not in actual:
                return f"{where}.{key}: missing"
            why = subset(value, actual[key], f"{where}.{key}")
            if why:
                return why
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return f"{where}: expected a list, got {shown(actual)}"
        if len(expected) != len(actual):
            return f"{where}: expected {len(expected)} items, got {len(actual)}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            why = subset(e, a, f"{where}[{i}]")
            if why:
                return why
        return None
    same = expected == actual and isinstance(expected, bool) == isinstance(actual, bool)
    return None if same else f"{where}: expected {shown(expected)}, got {shown(actual)}"


def shown(value, limit=80):
    """A value as JSON, shortened."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + "…"


def compare(expect, status, headers, text):
    """The differences between what was expected and the answer (status, headers, json, text), in words."""
    problems = []
    want = expect.get("status")
    if want is None and status >= 400:
        problems.append(f"expected a success status, got {status}")
    elif want is not None and status != want:
        problems.append(f"expected status {want}, got {status}")
    if problems:  # another status: its body is another answer's (an error page), not worth comparing
        return problems
    for name, value in (expect.get("headers") or {}).items():
        got = headers.get(name.lower())
        if got is None:
            problems.append(f"expected header {name}: {value!r}, it is missing")
        elif str(value).lower() not in got.lower():
            problems.append(f"expected header {name} to contain {value!r}, got {got!r}")
    if expect.get("json") is not None:
        try:
            data = json.loads(text)
        except ValueError:
            problems.append(f"expected a JSON body matching {shown(expect['json'])}, got a body that is not JSON")
        else:
            why = subset(expect["json"], data)
            if why:
                problems.append(f"JSON body {why}")
    if expect.get("text") is not None and expect["text"] not in text:
        problems.append(f"expected the body to contain {expect['text']!r}")
    return problems


def readable(text, headers):
    """A body as the report quotes it: an HTML page (an error page) by its text, without its tags."""
    if "html" not in headers.get("content-type", "").lower():
        return text
    text = re.sub(r"<(script|style)\b.*?</\1\s*>", " ", text, flags=re.S | re.I)
    return html.unescape(re.sub(r"<[^>]+>", " ", text))


def send(host, port, request, timeout):
    """Send one request; (status, lower-cased headers, body text) of the answer."""
    body, headers = encode(request)
    conn = HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request(request.get("method") or "GET", request.get("path") or "/", body=body, headers=headers)
        answer = conn.getresponse()
        data = answer.read(BODY_LIMIT)
        got = {}
        for name, value in answer.getheaders():
            got[name.lower()] = f"{got[name.lower()]}, {value}" if name.lower() in got else value
        return answer.status, got, data.decode("utf-8", errors="replace")
    finally:
        conn.close()


def requests(host, port, spec, proc):
    """Send every request in order; one verdict each."""
    out = []
    for request in spec.get("requests") or []:
        name = f"{request.get('method') or 'GET'} {request.get('path') or '/'}"
        try:
            status, headers, text = send(host, port, request, spec.get("request_timeout") or 10)
        except (OSError, ValueError) as exc:
            died = proc.poll()
            why = f"no answer ({type(exc).__name__}: {exc})" + \
                (f"; the server had exited with {died}" if died is not None else "")
            out.append({"request": name, "ok": False, "problems": [why]})
            continue
        problems = compare(request.get("expect") or {}, status, headers, text)
        flat = " ".join(readable(text, headers).split())  # one line: a page's layout says nothing here
        out.append({"request": name, "ok": not problems, "problems": problems, "status": status,
                    "body": flat[:SHOWN] + ("…" if len(flat) > SHOWN else "")})
    return out


def check(spec):
    """Start, wait, send, stop: the verdict as a dict, with the server's log (all it printed until it stopped)."""
    port = int(spec["port"])
    if connects(port):
        return {"ready": False, "busy": True}
    before = pids()
    proc = subprocess.Popen(["sh", "-c", spec["start"]], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    log = Log(proc.stdout)
    try:
        verdict = serve(spec, port, proc)
    finally:
        stop(proc)
        if spec.get("sandboxed"):  # only inside the container: on the host, other programs start meanwhile
            stop_new(before)
        log.thread.join(1)
    return {**verdict, "log": log.text()}


def serve(spec, port, proc):
    """Wait for the port (the server may exit, or never listen), then send the requests."""
    started, host = time.monotonic(), None
    while host is None:
        if proc.poll() is not None:
            return {"ready": False, "exited": proc.returncode}
        if time.monotonic() - started > float(spec.get("ready_timeout") or 20):
            return {"ready": False}
        host = connects(port)
        if host is None:
            time.sleep(0.1)
    listen_s = round(time.monotonic() - started, 2)
    return {"ready": True, "listen_s": listen_s, "results": requests(host, port, spec, proc)}


def main():
    verdict = check(json.loads(sys.argv[1]))
    if "log" in verdict:
        verdict["log"] = verdict["log"][-4000:]
    sys.stdout.write(MARKER + json.dumps(verdict) + "\n")


if __name__ == "__main__":
    main()
