"""A headless Chromium spoken to over the DevTools protocol on a pipe (standard library only): started with
--remote-debugging-pipe in its own process group, commands written on its fd 3 and replies read from its fd 4, each
a JSON text ended by NUL. Used by page_check.py inside the sandbox (agents/scenario/check_page.py writes both there)."""

import json
import os
import select
import shutil
import signal
import subprocess
import time

BROWSERS = ("/usr/lib/chromium/chromium-headless-shell", "/usr/lib/chromium/chromium", "chromium-headless-shell",
            "chromium", "chromium-browser", "google-chrome")
FLAGS = ["--headless", "--no-sandbox", "--no-zygote", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
         "--no-default-browser-check", "--disable-extensions", "--disable-background-networking", "--disable-sync",
         "--disable-component-update", "--disable-breakpad", "--disable-crash-reporter", "--mute-audio",
         "--hide-scrollbars", "--allow-file-access-from-files", "--font-render-hinting=none",
         "--remote-debugging-pipe", "about:blank"]


class BrowserError(Exception):
    """The browser went away, or answered a command with an error."""


class PageBusy(BrowserError):
    """The page's own scripts keep it from answering (an endless loop)."""

    def __init__(self, seconds):
        super().__init__("the page stopped answering: its scripts kept it busy for %g s (an endless loop?), so "
                         "nothing more could be checked" % seconds)


class Browser:
    """One headless Chromium in its own process group, spoken to over the DevTools pipe."""

    def __init__(self, binary, profile, log):
        to_browser, self._out = os.pipe()
        self._in, from_browser = os.pipe()
        # moved above 4 first, so that placing them at 3 and 4 in the child cannot overwrite one with the other
        high = [os.dup2(fd, 10 + i, inheritable=False) for i, fd in enumerate((to_browser, from_browser))]
        for fd in (to_browser, from_browser):
            os.close(fd)

        def place():
            os.dup2(high[0], 3)
            os.dup2(high[1], 4)

        env = dict(os.environ, HOME=profile, XDG_CONFIG_HOME=profile, XDG_CACHE_HOME=profile, TMPDIR=profile)
        self.proc = subprocess.Popen([binary, *FLAGS[:-1], "--user-data-dir=" + profile, FLAGS[-1]],
                                     stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env, close_fds=False,
                                     preexec_fn=place, start_new_session=True)
        for fd in high:
            os.close(fd)
        self._buffer, self._next, self.events = b"", 0, []
        self.main_frame = None  # the page's target id, which is its main frame's id too

    def call(self, method, params=None, session=None, timeout=10.0):
        """Send one command and wait for its reply (events that arrive meanwhile are kept in `events`)."""
        wanted = self.send(method, params, session)
        deadline = time.monotonic() + timeout
        while True:
            reply = self.receive(deadline)
            if reply is None:
                if session and method == "Runtime.evaluate":
                    raise PageBusy(timeout)
                raise BrowserError("the browser did not answer %s in %g s" % (method, timeout))
            if reply.get("id") == wanted:
                if "error" in reply:
                    raise BrowserError("%s: %s" % (method, reply["error"].get("message")))
                return reply.get("result") or {}
            self.keep(reply)

    def send(self, method, params=None, session=None):
        """Write one command (its reply is left to `call`); returns its id."""
        self._next += 1
        message = {"id": self._next, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        data = json.dumps(message).encode() + b"\0"
        try:
            while data:
                data = data[os.write(self._out, data):]
        except OSError as exc:
            raise BrowserError("the browser went away (%s)" % exc) from None
        return self._next

    def keep(self, message):
        """Keep an event; a dialog (alert, confirm, prompt) is accepted at once, or the page would wait for it."""
        if "method" not in message:
            return  # the reply to a command nobody waits for
        self.events.append(message)
        if message["method"] == "Page.javascriptDialogOpening":
            self.send("Page.handleJavaScriptDialog", {"accept": True}, message.get("sessionId"))

    def receive(self, deadline):
        """The next message from the browser, or None at the deadline."""
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._in], [], [], left)[0]:
                return None
            chunk = os.read(self._in, 1 << 20)
            if not chunk:
                raise BrowserError("the browser went away (exit code %s)" % self.proc.poll())
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def wait_event(self, name, deadline, since=0):
        """Until an event `name` is among the events from index `since` on (True), or the deadline passes (False)."""
        while True:
            if any(e.get("method") == name for e in self.events[since:]):
                return True
            message = self.receive(deadline)
            if message is None:
                return False
            self.keep(message)

    def drain(self, deadline):
        """Keep the events that arrive until the deadline."""
        message = self.receive(deadline)
        while message is not None:
            self.keep(message)
            message = self.receive(deadline)

    def close(self):
        """Kill the browser's whole process group."""
        for fd in (self._in, self._out):
            try:
                os.close(fd)
            except OSError:
                pass
        kill_group(self.proc)


def kill_group(proc):
    """SIGKILL a process started with start_new_session, and every process of its group; reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def find_browser(wanted=None):
    """The headless browser's path, or None."""
    for name in ([wanted] if wanted else []) + list(BROWSERS):
        path = name if os.path.isabs(name) else shutil.which(name)
        if path and os.access(path, os.X_OK):
            return path
    return None
