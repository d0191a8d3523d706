"""codeduet's page check inside the sandbox (standard library only; agents/scenario/check_page.py writes it fresh into
the
checks folder before each run): start the page's server when there is one, load the page in a headless Chromium
driven over the DevTools protocol on a pipe (cdp.py, written beside it), run the steps (page_steps.py), save a
screenshot, stop everything it started, and print one line: MARKER and the result as JSON.

Usage: python3 -I page_check.py SPEC_JSON
"""

import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

try:  # in the sandbox, cdp.py and page_steps.py are beside this script (run with python3 -I: the folder is added
    # after the library, so nothing there can shadow it)
    from agents.sandbox.incontainer.cdp import Browser, BrowserError, PageBusy, find_browser, kill_group
    from agents.sandbox.incontainer.page_steps import SETTLE, run_steps
except ImportError:
    sys.path.append(os.path.dirname(os.path.abspath(__file__)))
    from cdp import Browser, BrowserError, PageBusy, find_browser, kill_group
    from page_steps import SETTLE, run_steps

MARKER = "CODEDUET_PAGE_RESULT "
BUSY_PROBE = 2  # seconds a page that did not load has to answer one evaluation before it is called busy
LOG_MAX = 1500

def tail(path, limit=LOG_MAX):
    """The end of a log file."""
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, os.path.getsize(path) - limit))
            return fh.read().decode("utf-8", "replace")
    except OSError:
        return ""


def start_server(spec, scratch):
    """Start the page's server (sh -c, its own process group) and wait for its port: (process, log, problem)."""
    log_path = os.path.join(scratch, "server.log")
    log = open(log_path, "wb")
    proc = subprocess.Popen(["sh", "-c", spec["start"]], stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                            start_new_session=True)
    started, deadline = time.monotonic(), time.monotonic() + spec.get("ready_timeout", 20)
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            probe.settimeout(0.5)
            if probe.connect_ex(("127.0.0.1", spec["port"])) == 0:
                return proc, log_path, None
        if proc.poll() is not None:
            return proc, log_path, "the server (`%s`) exited with %s before it listened on port %d" % (
                spec["start"], proc.returncode, spec["port"])
        time.sleep(0.1)
    return proc, log_path, "the server (`%s`) did not listen on port %d within %g s" % (
        spec["start"], spec["port"], time.monotonic() - started)


def page_url(spec):
    """The address to open: a path on the started server, or a workspace file; (url, problem)."""
    target = spec["open"]
    if spec.get("port"):
        return "http://127.0.0.1:%d/%s" % (spec["port"], target.lstrip("/")), None
    path, _, rest = target.partition("#")
    path, query, search = path.partition("?")
    full = os.path.abspath(path)
    if not os.path.isfile(full):
        here = sorted(n for n in os.listdir(".") if not n.startswith("."))[:20]
        return None, "%s does not exist in the workspace (it holds: %s)" % (path, ", ".join(here) or "nothing")
    return "file://" + urllib.parse.quote(full) + query + search + ("#" + rest if "#" in target else ""), None


def page_errors(events):
    """The page's uncaught exceptions, console errors and failed loads, in order (at most 10)."""
    out = []
    for e in events:
        p = e.get("params") or {}
        if e.get("method") == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails") or {}
            text = ((d.get("exception") or {}).get("description") or d.get("text") or "").split("\n    at ")[0]
            where = os.path.basename(d.get("url") or "")
            out.append("%s%s" % (text, " (%s:%s)" % (where, d.get("lineNumber", 0) + 1) if where else ""))
        elif e.get("method") == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            out.append("console.error: " + " ".join(str(a.get("value", a.get("description", "")))
                                                    for a in p.get("args") or []))
        elif e.get("method") == "Page.javascriptDialogOpening":
            out.append("%s(%s): a dialog, accepted by the check (the steps read the page's own text)"
                       % (p.get("type", "alert"), json.dumps(p.get("message", ""))))
        elif e.get("method") == "Log.entryAdded" and (p.get("entry") or {}).get("level") == "error":
            entry = p["entry"]
            if (entry.get("url") or "").endswith("/favicon.ico"):  # asked for by the browser, not the page
                continue
            out.append("%s%s" % (entry.get("text"), " (%s)" % entry["url"] if entry.get("url") else ""))
    return [line[:300] for line in out[:10]]


def save_png(path, data):
    """Write the screenshot at `path` (a fresh file, never through a link)."""
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    if os.path.lexists(path):
        os.unlink(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)


def check(spec, scratch):
    """Run the whole check; the result as a dict."""
    result = {"passed": False, "steps_passed": 0, "steps": len(spec["steps"]), "errors": []}
    if spec.get("screenshot") and os.path.lexists(spec["screenshot"]):
        os.unlink(spec["screenshot"])  # an earlier run's: never shown as this one's
    binary = find_browser(spec.get("browser"))
    if binary is None:
        result["problem"] = "no headless browser in this sandbox"
        result["no_browser"] = True
        return result
    server = None
    browser_log = os.path.join(scratch, "browser.log")
    try:
        if spec.get("start"):
            server, log_path, problem = start_server(spec, scratch)
            result["server_log"] = tail(log_path) if problem else ""
            if problem:
                result["problem"] = problem
                return result
        url, problem = page_url(spec)
        if problem:
            result["problem"] = problem
            return result
        with open(browser_log, "wb") as log:
            browser = Browser(binary, os.path.join(scratch, "profile"), log)
        try:
            result.update(drive(browser, spec, url))
        except PageBusy as exc:
            result["problem"] = str(exc)
        except BrowserError as exc:
            result["problem"] = "the browser failed: %s" % exc
            result["browser_log"] = "\n".join(line for line in tail(browser_log, 4000).splitlines()
                                               if "dbus" not in line)[-600:]
        finally:
            browser.close()
        if server is not None:
            result["server_log"] = tail(log_path)
    finally:
        if server is not None:
            kill_group(server)
    return result


def drive(browser, spec, url):
    """Open the page, run the steps, take the screenshot."""
    out = {}
    target = browser.main_frame = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    for domain in ("Page", "Runtime", "Log"):
        browser.call(domain + ".enable", {}, session)
    width, height = spec.get("viewport") or (800, 600)
    browser.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1,
                                                        "mobile": False}, session)
    browser.call("Emulation.setFocusEmulationEnabled", {"enabled": True}, session)
    start = len(browser.events)
    load_timeout = spec.get("load_timeout", 10)
    navigated = browser.call("Page.navigate", {"url": url}, session)
    if navigated.get("errorText"):
        out["problem"] = "the page %s could not be loaded: %s" % (spec["open"], navigated["errorText"])
    elif not browser.wait_event("Page.loadEventFired", time.monotonic() + load_timeout, start):
        out["load_note"] = "the page's load event did not come within %g s" % load_timeout
        try:  # a page whose scripts never yield does not load either: a short probe tells it from a slow load
            browser.call("Runtime.evaluate", {"expression": "0"}, session, timeout=BUSY_PROBE)
        except PageBusy:
            raise PageBusy(load_timeout + BUSY_PROBE) from None
    if "problem" not in out:
        browser.call("Runtime.evaluate", {"expression": SETTLE, "awaitPromise": True}, session)
        out["steps_passed"], failed, out["notes"] = run_steps(browser, session, spec["steps"])
        out["passed"] = failed is None
        if failed:
            out["failed"] = failed
    out["title"] = (browser.call("Runtime.evaluate", {"expression": "document.title", "returnByValue": True},
                                 session).get("result") or {}).get("value") or ""
    if spec.get("screenshot"):
        shot = browser.call("Page.captureScreenshot", {"format": "png"}, session, timeout=30)
        save_png(spec["screenshot"], base64.b64decode(shot["data"]))
        out["screenshot"] = spec["screenshot"]
    browser.drain(time.monotonic() + 0.05)  # the last console messages
    out["errors"] = page_errors(browser.events)
    return out


def main():
    # stopped at the time limit (timeout sends TERM first): the finally blocks still stop the browser and server
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(124))
    spec = json.loads(sys.argv[1])
    scratch = tempfile.mkdtemp(prefix="codeduet-page-")
    try:
        result = check(spec, scratch)
    except Exception as exc:  # reported, never a traceback the model would read as its own
        result = {"passed": False, "problem": "the page check failed: %s: %s" % (type(exc).__name__, exc)}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    sys.stdout.write(MARKER + json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
