"""HumanEval candidate building and docstring-example running: stdlib only, also embedded in sandbox scripts.

The same source builds the scored candidate on the host and runs inside the sandbox (the visible-test check
and the scorer copy this file's text into the scripts they generate), so both see the same candidate.
"""

import ast
import linecache
import math
import signal
import textwrap
import traceback

SOLUTION_FILE = "<solution>"
KEEP = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _defines(tree, name):
    return any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name for n in tree.body)


def _parse(code):
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError):
        return None


def _segment(code, node):
    seg = ast.get_source_segment(code, node, padded=True)
    deco = getattr(node, "decorator_list", None)
    if deco:
        lines = code.splitlines()
        seg = "\n".join(lines[deco[0].lineno - 1:node.end_lineno])
    return textwrap.dedent(seg) if seg else ast.unparse(node)


def _kept(node):
    """Top-level nodes a solution keeps: imports, defs, classes, plain assignments, import-only try blocks."""
    if isinstance(node, KEEP):
        return True
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return all(isinstance(t, ast.Name) for t in targets)
    if isinstance(node, ast.Try):
        return all(isinstance(n, (ast.Import, ast.ImportFrom)) for n in node.body)
    return False


def sanitize(code, entry_point):
    """The solution part of a block: drops top-level tests, prints, input() and __main__ sections."""
    tree = _parse(code)
    if tree is None:
        return code
    return "\n\n".join(_segment(code, n) for n in tree.body if _kept(n)) + "\n"


def prompt_prelude(prompt, entry_point, code):
    """The prompt's imports and helper functions that `code` does not define itself."""
    tree = _parse(prompt + "\n    pass\n")
    if tree is None:
        return ""
    own = _parse(code)
    defined = {n.name for n in (own.body if own else []) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    parts = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            parts.append(_segment(prompt, node))
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name != entry_point \
                and node.name not in defined:
            parts.append(_segment(prompt, node))
    return "\n".join(parts) + "\n\n" if parts else ""


def _as_body(prompt, code, entry_point):
    """A reply that is only the function body (it returns something): completed under the prompt's signature."""
    body = textwrap.indent(textwrap.dedent(code), "    ")
    full = prompt.rstrip("\n") + "\n" + body
    tree = _parse(full)
    if tree is None or not _defines(tree, entry_point):
        return None
    fn = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == entry_point][-1]
    return full if _returns(fn.body) else None


def _returns(nodes):
    """Whether these statements return a value themselves (nested functions and classes do not count)."""
    for node in nodes:
        if isinstance(node, ast.Return) and node.value is not None:
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if _returns(ast.iter_child_nodes(node)):
            return True
    return False


def build_candidate(blocks, prompt, entry_point):
    """The candidate from code blocks (oldest first): the newest that defines entry_point, sanitized, plus the
    prompt's imports and helpers; else the newest block completed as the body of the prompt's function.

    Returns (candidate source or None, the code as written that it came from or None).
    """
    for code in reversed(blocks):
        tree = _parse(code)
        if tree is not None and _defines(tree, entry_point):
            solution = sanitize(code, entry_point)
            return prompt_prelude(prompt, entry_point, solution) + solution, code
    for code in reversed(blocks):
        full = _as_body(prompt, code, entry_point)
        if full is not None:
            return "\n\n".join(_segment(full, n) for n in _parse(full).body if _kept(n)) + "\n", full
    return None, None


# -- running docstring examples ----------------------------------------------------------------

def _short(value, limit=200):
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "...(cut)"


def same(got, want):
    """Equality, with float tolerance inside numbers, lists, tuples and dicts."""
    if isinstance(got, bool) or isinstance(want, bool):
        return got == want
    if isinstance(got, (int, float)) and isinstance(want, (int, float)):
        return got == want or math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-9)
    if isinstance(got, (list, tuple)) and isinstance(want, (list, tuple)):
        return type(got) is type(want) and len(got) == len(want) and all(same(a, b) for a, b in zip(got, want))
    return got == want


class _Slow(Exception):
    pass


def _alarm(signum, frame):
    raise _Slow()


def _where(exc):
    """The line of the solution where an exception was raised, if it was raised there."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == SOLUTION_FILE]
    return frames[-1].line if frames and frames[-1].line else None


def load_solution(source):
    """Execute the candidate source; returns (namespace, None) or (None, error text)."""
    ns = {"__name__": "solution"}
    linecache.cache[SOLUTION_FILE] = (len(source), None, source.splitlines(True), SOLUTION_FILE)
    try:
        exec(compile(source, SOLUTION_FILE, "exec"), ns)
    except BaseException as exc:  # noqa: BLE001 - any failure is the candidate's
        return None, f"defining the function raised {type(exc).__name__}: {exc}"
    return ns, None


def run_examples(ns, examples, seconds=3):
    """Run each {call, expected} example; returns (passed, failure lines)."""
    failures, passed = [], 0
    use_alarm = hasattr(signal, "SIGALRM")
    for ex in examples:
        call = ex["call"]
        try:
            want = eval(ex["expected"], {"__builtins__": __builtins__})
        except Exception:  # noqa: BLE001 - unusable example: skipped
            continue
        if use_alarm:
            old = signal.signal(signal.SIGALRM, _alarm)
            signal.alarm(seconds)
        try:
            got = eval(call, ns)
        except _Slow:
            failures.append(f"{call} did not finish within {seconds} s (endless loop?), expected {_short(want)}")
            continue
        except BaseException as exc:  # noqa: BLE001
            at = _where(exc)  # the team's QA report reads this line's exception and source (team.CALL_RAISED)
            failures.append(f"{call} raised {type(exc).__name__}: {exc}" + (f" at: {at.strip()}" if at else "")
                            + f"; expected {_short(want)}")
            continue
        finally:
            if use_alarm:
                signal.alarm(0)
                signal.signal(signal.SIGALRM, old)
        if same(got, want):
            passed += 1
        else:
            failures.append(f"{call} returned {_short(got)}, expected {_short(want)}")
    return passed, failures


def report(passed, failures, repeated=False, shown=3):
    """The message the assistant reads when examples fail (a few lines: the feedback keeps only six)."""
    total = passed + len(failures)
    lines = [f"{len(failures)} of {total} examples from the docstring failed:", *failures[:shown]]
    if repeated:
        lines.append("This function is the same as one you already sent, so it fails the same way: change its logic.")
    else:
        lines.append("Find the mistake that makes it return these values, then fix the function.")
    return "\n".join(lines)


def is_repeat(blocks, prompt, entry_point):
    """Whether the newest candidate is the same as one built from fewer blocks (a repeated answer)."""
    newest = build_candidate(blocks, prompt, entry_point)[0]
    return newest is not None and any(build_candidate(blocks[:i], prompt, entry_point)[0] == newest
                                      for i in range(1, len(blocks)))
