"""The page check's steps inside the sandbox (standard library only; written beside page_check.py): each step run
in the page over the DevTools protocol (cdp.py) and judged, expected against actual; a click or typing given time to
render, and a page it loaded waited for."""

import json
import os
import time
import urllib.parse

try:  # in the sandbox, cdp.py is beside this script (run with python3 -I: the folder is added after the library)
    from agents.sandbox.incontainer.cdp import BrowserError, PageBusy
except ImportError:
    from cdp import BrowserError, PageBusy

STEP_WAIT = 2.0
"""Seconds a step that does not hold yet is tried again (a page that renders after a timer or a fetch)."""
FIND = """(function (sel) {
  const all = [...document.querySelectorAll(sel)];
  const shown = all.filter(e => e.getClientRects().length && getComputedStyle(e).visibility !== 'hidden');
  const el = all[0];
  const field = el && ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName);
  const text = el ? (field ? el.value : (el.innerText ?? el.textContent)) : null;
  return {count: all.length, shown: shown.length, text: text, displayed: !!el && shown.includes(el)};
})(%s)"""
CLICK = """(function (sel) {
  const el = document.querySelector(sel);
  el.scrollIntoView({block: 'center'});
  el.click();
  return true;
})(%s)"""
FOCUS = """(function (sel) {
  const el = document.querySelector(sel);
  el.scrollIntoView({block: 'center'});
  el.focus();
  const proto = el.tagName === 'TEXTAREA' ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
  const setter = Object.getOwnPropertyDescriptor(proto, 'value');
  if ('value' in el && setter) { setter.set.call(el, ''); }
  return document.activeElement === el;
})(%s)"""
CHANGED = """(function (sel) {
  const el = document.querySelector(sel);
  el.dispatchEvent(new Event('change', {bubbles: true}));
  return 'value' in el ? el.value : el.textContent;
})(%s)"""
SETTLE = """new Promise(done => { setTimeout(done, 300);
  requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(done, 50))); })"""


NAVIGATING = ("Page.frameRequestedNavigation", "Page.frameStartedNavigating", "Page.frameNavigated")


def settle(browser, session, start):
    """Let the page render after a click or typing (whose events start at index `start`); when that loaded another
    page, wait for its load and return where it went (else None)."""
    for _ in range(2):
        try:
            browser.call("Runtime.evaluate", {"expression": SETTLE, "awaitPromise": True}, session)
        except PageBusy:
            raise
        except BrowserError:  # the page went away under the evaluation: a navigation
            pass
        browser.drain(time.monotonic() + 0.1)
        went = [(e["params"].get("frame") or e["params"]).get("url", "") for e in browser.events[start:]
                if e.get("method") in NAVIGATING and e.get("sessionId") == session
                and not (e["params"].get("frame") or {}).get("parentId")
                and e["params"].get("frameId", browser.main_frame) == browser.main_frame]
        if not went:
            return None
        if browser.wait_event("Page.loadEventFired", time.monotonic() + 10, since=start):
            break
    parts = urllib.parse.urlsplit(went[-1])
    where = os.path.basename(parts.path) if parts.scheme == "file" else parts.path
    return where + ("?" + parts.query if parts.query else "")


def run_steps(browser, session, steps):
    """Run the steps in order until one fails: (steps passed, the failed step's message or None, notes)."""
    notes = []
    def evaluate(template, selector):
        result = browser.call("Runtime.evaluate", {"expression": template % json.dumps(selector),
                                                   "returnByValue": True, "awaitPromise": True}, session)
        if "exceptionDetails" in result:  # a selector querySelector refused
            details = result["exceptionDetails"]
            raise ValueError(((details.get("exception") or {}).get("description") or details.get("text") or "")
                             .split("\n")[0])
        return (result.get("result") or {}).get("value")

    for n, step in enumerate(steps, 1):
        kind, arg = next(iter(step.items()))
        selector = arg if isinstance(arg, str) else arg["selector"]
        deadline = time.monotonic() + STEP_WAIT
        while True:
            try:
                found = evaluate(FIND, selector)
            except ValueError as exc:
                return n - 1, "step %d: the selector %s is not valid CSS (%s)" % (
                    n, json.dumps(selector), exc), notes
            problem = judge(kind, arg, selector, found)
            if problem is None or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        start = len(browser.events)
        if problem is None and kind == "click":
            evaluate(CLICK, selector)
        elif problem is None and kind == "type":
            evaluate(FOCUS, selector)
            for ch in arg["text"]:
                browser.call("Input.dispatchKeyEvent", {"type": "keyDown", "text": ch, "key": ch,
                                                        "unmodifiedText": ch}, session)
                browser.call("Input.dispatchKeyEvent", {"type": "keyUp", "key": ch}, session)
            value = evaluate(CHANGED, selector)
            if value != arg["text"]:
                problem = "typed %s into %s, but its value is %s" % (
                    json.dumps(arg["text"]), json.dumps(selector), json.dumps(value))
        if problem is not None:
            return n - 1, "step %d %s" % (n, problem), notes
        if kind in ("click", "type"):
            went = settle(browser, session, start)
            if went is not None:
                notes.append("step %d (%s %s) loaded another page, %s: a form's submit does so unless its handler "
                             "calls event.preventDefault()" % (n, kind, json.dumps(selector), went))
    return len(steps), None, notes


def judge(kind, arg, selector, found):
    """Why a step does not hold on what FIND saw (None: it holds)."""
    quoted = json.dumps(selector)
    if kind == "count":
        if found["shown"] == arg["equals"]:
            return None
        hidden = " (%d match, %d of them hidden)" % (found["count"], found["count"] - found["shown"]) \
            if found["count"] != found["shown"] else ""
        return "count of %s: expected %d shown, got %d%s" % (quoted, arg["equals"], found["shown"], hidden)
    if not found["count"]:
        return "%s %s: no element matches %s" % (kind, quoted, quoted) if kind != "text" else \
            "text of %s: no element matches %s" % (quoted, quoted)
    if kind in ("click", "type") and not found["displayed"]:
        return "%s %s: the element matches but is not displayed (hidden), so it cannot be used" % (kind, quoted)
    if kind == "text":
        got = " ".join((found["text"] or "").split())
        if "equals" in arg and got != " ".join(arg["equals"].split()):
            return "text of %s: expected %s, got %s" % (quoted, json.dumps(arg["equals"]), json.dumps(got[:300]))
        if "contains" in arg and " ".join(arg["contains"].split()) not in got:
            return "text of %s: expected it to contain %s, got %s" % (
                quoted, json.dumps(arg["contains"]), json.dumps(got[:300]))
    return None
