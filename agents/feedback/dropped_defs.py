"""A whole-file reply that leaves out a definition the code still needs: the definition is kept.

The 1.5B model rewrites a module whole and now and then leaves out a function it did not mean to touch: in one run
it sent shop/pricing.py back with apply_discount() only, shop/cart.py still imported format_cents(), and every
check failed with an ImportError until the attempt ended (docs/BENCHMARKS.md). A definition a reply drops is put
back when something still needs it:
- the new text itself uses the name (it would be a NameError), or
- another Python file of the workspace imports it from this module (`from shop.pricing import format_cents`,
  `import shop.pricing as p` ... `p.format_cents`);
with whatever of the old module those kept definitions use in turn (other dropped functions, imports, constants).
A definition nothing uses any more is left out, as the reply wrote it (a module it restructures stays restructured).
The report says what was kept and why; the file as saved is shown under it, and the transcript records it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from agents.feedback.workspace_view import MAX_ENTRIES, hidden, regular_files
from agents.sandbox.filenames import UnsafeFilename, clean_path, declared_filename, through_link

DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
MAX_IMPORTER_BYTES = 256 * 1024


@dataclass
class Kept:
    """What was put back into one saved module."""

    path: str
    names: list[str]
    """Functions and classes kept, in the old module's order."""
    why: dict[str, str] = field(default_factory=dict)
    """name -> what needs it ("shop/cart.py imports it", "the new text uses it", "format_cents() uses it")."""
    also: list[str] = field(default_factory=list)
    """Imports and module-level names kept because the kept definitions use them."""

    def to_dict(self) -> dict[str, object]:
        """Plain dict for transcripts."""
        return {"path": self.path, "names": self.names, "why": self.why, "also": self.also}

    def text(self) -> str:
        """One line for the report."""
        names = ", ".join(f"{n}()" for n in self.names)
        reasons = "; ".join(f"{n}: {self.why[n]}" for n in self.names if n in self.why)
        return (f"- kept {names} in {self.path} from its previous version: your reply left "
                f"{'it' if len(self.names) == 1 else 'them'} out, but the code still needs "
                f"{'it' if len(self.names) == 1 else 'them'} ({reasons})"
                + (f", with the {', '.join(self.also)} {'it uses' if len(self.names) == 1 else 'they use'}"
                   if self.also else "") + ". The rest of the file is as you sent it.")


def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None


def _bound(tree: ast.Module) -> set[str]:
    """Names the module's top level binds: definitions, imports, assignments."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, DEFS):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return names


def _used(node: ast.AST) -> set[str]:
    """Names a piece of code reads."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _set_anywhere(tree: ast.AST) -> set[str]:
    """Names assigned or taken as parameters anywhere (a local `total` is not the module's total())."""
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    names |= {a.arg for n in ast.walk(tree) if isinstance(n, ast.arguments)
              for a in [*n.posonlyargs, *n.args, *n.kwonlyargs, n.vararg, n.kwarg] if a is not None}
    names |= {n.name for n in ast.walk(tree) if isinstance(n, DEFS)}
    return names


def with_needed(code: str, workspace: Path) -> tuple[str, Kept | None]:
    """A reply's block as it is to be saved: a `# filename:` block for a Python module of the workspace gets back
    what it dropped that the code still needs (keep_needed); any other block is returned as it is."""
    raw = declared_filename(code)
    if not raw:
        return code, None
    try:
        path = clean_path(raw)
    except UnsafeFilename:
        return code, None
    if not path.endswith(".py") or through_link(workspace, path) is not None or not (workspace / path).is_file():
        return code, None
    return keep_needed(path, code, workspace)


def module_name(path: str) -> str:
    """shop/pricing.py -> shop.pricing; shop/__init__.py -> shop."""
    parts = list(PurePosixPath(path).with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolves(module: str | None, level: int, importer: str, target: str) -> bool:
    """Whether `from <level dots><module> import ...` in `importer` names the module `target` (dotted). Without dots,
    a suffix of the dotted path counts too (tests next to the module import it by its short name)."""
    if level:
        base = list(PurePosixPath(importer).parent.parts)
        if level > 1:
            base = base[:len(base) - (level - 1)] if len(base) >= level - 1 else []
        full = ".".join([*base, *(module.split(".") if module else [])])
        return full == target
    return bool(module) and (module == target or target.endswith("." + str(module)))


def imported_from(tree: ast.Module, importer: str, target: str) -> set[str]:
    """Names `importer` takes from the module `target`: `from target import x`, or `target.x` (or its alias's)."""
    names: set[str] = set()
    aliases: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for a in node.names:
                if _resolves(node.module, node.level, importer, target):
                    names.add(a.name)
                elif _resolves(".".join(filter(None, [node.module, a.name])), node.level, importer, target):
                    aliases.add(a.asname or a.name)  # from shop import pricing
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name == target or target.endswith("." + a.name):
                    aliases.add(a.asname or a.name)
    if aliases:
        for node in ast.walk(tree):  # p.format_cents, or shop.pricing.format_cents after `import shop.pricing`
            if isinstance(node, ast.Attribute) and ast.unparse(node.value) in aliases:
                names.add(node.attr)
    return names


def _importers(workspace: Path, path: str, dropped: set[str]) -> dict[str, str]:
    """dropped name -> the first other workspace file that imports it from `path`."""
    target = module_name(path)
    found: dict[str, str] = {}
    for other, st in sorted(regular_files(workspace))[:MAX_ENTRIES]:
        if other == path or not other.endswith(".py") or hidden(other) or st.st_size > MAX_IMPORTER_BYTES:
            continue
        try:
            tree = _parse((workspace / other).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            continue
        if tree is None:
            continue
        for name in imported_from(tree, other, target) & dropped:
            found.setdefault(name, other)
    return found


def _lines(text: str, node: ast.stmt) -> list[str]:
    """The source lines of a top-level statement, its decorators included."""
    start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
    return text.splitlines()[start - 1:node.end_lineno]


def keep_needed(path: str, new: str, workspace: Path) -> tuple[str, Kept | None]:
    """The text to save at `path` for a reply's whole-file block `new`: as sent, or with what it dropped but the
    code still needs put back (module docstring). Only for a Python module that exists and parses, old and new."""
    if not path.endswith(".py"):
        return new, None
    try:
        if (workspace / path).stat().st_size > MAX_IMPORTER_BYTES:
            return new, None
        old = (workspace / path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return new, None
    old_tree, new_tree = _parse(old), _parse(new)
    if old_tree is None or new_tree is None:
        return new, None
    bound = _bound(new_tree)
    defs = {n.name: n for n in old_tree.body if isinstance(n, DEFS)}
    dropped = {name for name in defs if name not in bound}
    if not dropped:
        return new, None
    why = {name: "the new text uses it" for name in sorted((_used(new_tree) - _set_anywhere(new_tree)) & dropped)}
    if dropped - set(why):
        for name, other in _importers(workspace, path, dropped - set(why)).items():
            why[name] = f"{other} imports it"
    if not why:
        return new, None
    uses = {name: _used(defs[name]) for name in dropped}
    kept = set(why)
    while True:  # what the kept definitions use of the other dropped ones
        more = {n for k in kept for n in uses[k] & dropped} - kept
        if not more:
            break
        for n in sorted(more):
            user = next(k for k in sorted(kept) if n in uses[k])
            why[n] = f"{user}() uses it"
        kept |= more
    needs = set().union(*(uses[k] for k in kept)) - bound - kept
    support: list[ast.stmt] = []  # old imports and assignments the kept definitions read, and the new text lacks
    also: list[str] = []
    for node in old_tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign)) and \
                (binds := _bound_by(node) & needs):
            support.append(node)
            also += sorted(binds)
    return _compose(old, new, new_tree, [defs[n] for n in defs if n in kept], support), \
        Kept(path, [n for n in defs if n in kept], {n: why[n] for n in defs if n in kept}, also)


def _bound_by(node: ast.stmt) -> set[str]:
    return _bound(ast.Module(body=[node], type_ignores=[]))


def _compose(old: str, new: str, new_tree: ast.Module, kept: list[ast.stmt], support: list[ast.stmt]) -> str:
    """`new` with the old module's `support` statements after its imports and the `kept` definitions before its
    `if __name__ == "__main__":` block (or at its end)."""
    lines = new.splitlines()
    head = [ln for node in support for ln in _lines(old, node)]
    body = [ln for node in kept for ln in ["", "", *_lines(old, node)]]
    imports = [n for n in new_tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    first = next((n for n in new_tree.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)
                                                   and isinstance(n.value.value, str))), None)
    at_head = imports[-1].end_lineno if imports else (first.lineno - 1 if first is not None else len(lines))
    if head and not imports:
        head += ["", ""]  # before the module's first statement
    main = next((n for n in new_tree.body if isinstance(n, ast.If) and "__name__" in ast.unparse(n.test)), None)
    at_body = main.lineno - 1 if main is not None else len(lines)
    at_head = min(at_head, at_body)
    if main is not None:
        body += ["", ""]
    middle = lines[at_head:at_body]
    while middle and not middle[-1].strip():
        middle.pop()
    out = lines[:at_head] + head + middle + body + lines[at_body:]
    return "\n".join(out).rstrip("\n") + "\n"
