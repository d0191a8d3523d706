"""Visible tests: the examples written in a HumanEval docstring, extracted as (call, expected) pairs.

Only the prompt is read. Each example is then kept only if the reference solution agrees with it (checked in
the sandbox), so a typo in a docstring never misleads the loop; the hidden check() tests are not used here.
"""

from __future__ import annotations

import ast
import builtins
import json
import re
from pathlib import Path
from typing import Any

SEPARATOR = re.compile(r"^\s*#?\s*(?:==>|=>|➞|->|→|==|=|(?:should\s+)?(?:returns?|gives?)\b|:|\bis\b)\s*(.+)$", re.I)
FOR_FORM = re.compile(r"For\s+(.+?)\s+the\s+(?:output|result)\s+should\s+be\s+(.+)", re.I)
INPUT_FORM = re.compile(r"Input:\s*(.+)\n\s*Output:\s*(.+)", re.I)
WORDS = {"true": "True", "false": "False", "none": "None", "null": "None"}


def docstring(prompt: str, entry_point: str) -> str:
    """The raw docstring of the entry-point function ('' when there is none)."""
    try:
        tree = ast.parse(prompt + "\n    pass\n")
    except SyntaxError:
        return ""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == entry_point:
            return ast.get_docstring(node, clean=False) or ""
    return ""


def _is_expr(text: str) -> bool:
    try:
        ast.parse(text.strip(), mode="eval")
        return bool(text.strip())
    except SyntaxError:
        return False


def _calls(tree: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name for n in ast.walk(tree))


def _value(text: str) -> str | None:
    """The longest prefix of text that is a Python expression (true/false mapped), or None."""
    text = text.strip()
    if text.lower().rstrip(".") in WORDS:
        return WORDS[text.lower().rstrip(".")]
    for end in range(len(text), 0, -1):
        candidate = text[:end].strip().rstrip(",;")
        if candidate and _is_expr(candidate):
            return ast.unparse(ast.parse(candidate, mode="eval"))
    return None


def _balanced_end(text: str, start: int) -> int | None:
    """Index just past the parenthesis that closes the one at text[start] (quotes respected)."""
    depth, quote, i = 0, None, start
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return None


def _doctest_examples(doc: str, entry_point: str) -> tuple[list[dict[str, str]], set[int]]:
    """`>>> expr` followed by its output; `>>> f(x) == y` with no output. Returns examples and used lines."""
    lines = doc.splitlines()
    examples, used = [], set()
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        if not stripped.startswith(">>>"):
            i += 1
            continue
        used.add(i)
        source = stripped[3:].strip()
        j = i + 1
        while j < len(lines) and lines[j].strip().startswith("..."):
            source += "\n" + lines[j].strip()[3:].strip()
            used.add(j)
            j += 1
        output = []
        while j < len(lines) and lines[j].strip() and not lines[j].strip().startswith(">>>"):
            output.append(lines[j].strip())
            used.add(j)
            j += 1
        i = j
        try:
            tree = ast.parse(source, mode="eval")
        except SyntaxError:
            examples.extend(_scan(source, entry_point))
            continue
        if not _calls(tree, entry_point):
            continue
        body = tree.body
        if isinstance(body, ast.Compare) and len(body.ops) == 1 and isinstance(body.ops[0], ast.Eq) \
                and (not output or output == ["True"]):
            examples.append({"call": ast.unparse(body.left), "expected": ast.unparse(body.comparators[0])})
        elif output and _value(" ".join(output)) is not None:
            examples.append({"call": ast.unparse(body), "expected": _value(" ".join(output))})
        elif isinstance(body, ast.Subscript):
            examples.extend(_scan(source, entry_point))
    return examples, used


def _scan(text: str, entry_point: str) -> list[dict[str, str]]:
    """`f(args) ==> value` style examples (==>, =>, ➞, ->, ==, =, returns, should return, is, :, a bare list)."""
    examples = []
    for m in re.finditer(rf"(?<![\w.]){re.escape(entry_point)}\s*\(", text):
        end = _balanced_end(text, m.end() - 1)
        if end is None:
            continue
        call = text[m.start():end]
        if not _is_expr(call):
            continue
        rest = text[end:].split("\n", 1)[0]
        sep = SEPARATOR.match(rest)
        tail = sep.group(1) if sep else (rest if rest.strip().startswith("[") else "")
        value = _value(tail) if tail.strip() else None
        if value is not None:
            examples.append({"call": " ".join(call.split()), "expected": value})
    return examples


def parameters(prompt: str, entry_point: str) -> list[str]:
    """The entry point's positional parameter names."""
    try:
        tree = ast.parse(prompt + "\n    pass\n")
    except SyntaxError:
        return []
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == entry_point), None)
    return [a.arg for a in fn.args.args] if fn else []


def _arguments(text: str, params: list[str]) -> str | None:
    """`lst = [1,2], k = 3` (longest prefix that is keyword arguments) or a bare value for a one-parameter function,
    as positional arguments in the signature's order."""
    text = text.strip()
    for end in sorted({len(text), *(i for i, ch in enumerate(text) if ch == ",")}, reverse=True):
        try:
            call = ast.parse(f"_({text[:end]})", mode="eval").body
        except SyntaxError:
            continue
        if call.keywords and not call.args and [k.arg for k in call.keywords] == params[:len(call.keywords)] \
                and len(call.keywords) == len(params):
            return ", ".join(ast.unparse(k.value) for k in call.keywords)
        if len(params) == 1 and len(call.args) == 1 and not call.keywords:
            return ast.unparse(call.args[0])
    return None


def _named_examples(doc: str, entry_point: str, params: list[str]) -> list[dict[str, str]]:
    """`For lst = [1,2] the output should be 3` and `Input: ... / Output: ...` examples."""
    examples = []
    for rx in (FOR_FORM, INPUT_FORM):
        for m in rx.finditer(doc):
            args, value = _arguments(m.group(1), params), _value(m.group(2))
            if args is not None and value is not None:
                examples.append({"call": f"{entry_point}({args})", "expected": value})
    return examples


def _aliases(doc: str, entry_point: str, known: set[str]) -> str:
    """Examples that call the function by another name (a typo in the docstring) renamed to the entry point."""
    def rename(m: re.Match[str]) -> str:
        return m.group(1) + (entry_point if m.group(2) not in known else m.group(2)) + "("
    return re.sub(r"(?m)^(\s*(?:assert\s+)?)([A-Za-z_]\w*)\(", rename, doc)


def extract_examples(prompt: str, entry_point: str) -> list[dict[str, str]]:
    """The docstring's examples as [{call, expected}], deduplicated, in order."""
    doc = docstring(prompt, entry_point)
    examples, used = _doctest_examples(doc, entry_point)
    rest = "\n".join(line for i, line in enumerate(doc.splitlines()) if i not in used)
    known = set(dir(builtins)) | set(re.findall(r"(?m)^def (\w+)", prompt))
    examples += _scan(_aliases(rest, entry_point, known), entry_point)
    examples += _named_examples(rest, entry_point, parameters(prompt, entry_point))
    seen, unique = set(), []
    for ex in examples:
        key = (ex["call"], ex["expected"])
        if key not in seen:
            seen.add(key)
            unique.append(ex)
    return unique


VALIDATE = """
import json, sys
sys.setrecursionlimit(10000)
problems = json.load(open(sys.argv[1]))
verdicts = {}
for p in problems:
    ns, error = load_solution(p["source"])
    keep = []
    for ex in p["examples"]:
        if ns is not None and run_examples(ns, [ex], seconds=5)[0] == 1:
            keep.append(ex)
    verdicts[p["task_id"]] = keep
json.dump(verdicts, open(sys.argv[2], "w"))
print("validated", len(verdicts))
"""


def runner_source() -> str:
    """The text of runner.py, for scripts that run in the sandbox."""
    return (Path(__file__).parent / "runner.py").read_text(encoding="utf-8")


def validated_examples(problems: list[dict[str, Any]], executor: Any) -> dict[str, dict[str, Any]]:
    """Per task: the extracted examples the reference solution agrees with (run in the sandbox), and the dropped."""
    extracted = {p["task_id"]: extract_examples(p["prompt"], p["entry_point"]) for p in problems}
    payload = [{"task_id": p["task_id"], "source": p["prompt"] + p["canonical_solution"],
                "examples": extracted[p["task_id"]]} for p in problems]
    (executor.workspace / "problems.json").write_text(json.dumps(payload), encoding="utf-8")
    (executor.workspace / "validate.py").write_text(runner_source() + VALIDATE, encoding="utf-8")
    result = executor.run_command(["python3", "validate.py", "problems.json", "verdicts.json"], timeout=300)
    out = executor.workspace / "verdicts.json"
    if result.exit_code != 0 or not out.is_file():
        from agents.loop.errors import EnvironmentProblem

        raise EnvironmentProblem(f"validating docstring examples in the sandbox failed (exit {result.exit_code}): "
                                 f"{result.output.strip()[-300:]}")
    verdicts = json.loads(out.read_text(encoding="utf-8"))
    return {tid: {"examples": verdicts.get(tid, []),
                  "dropped": [ex for ex in exs if ex not in verdicts.get(tid, [])]}
            for tid, exs in extracted.items()}
