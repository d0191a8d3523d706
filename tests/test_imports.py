"""No import cycle among the modules of agents/: each module's imports, read with ast, form a graph without a loop.

Imports under `if TYPE_CHECKING:` are not counted (they never run), nor are imports inside a function: those run
on first call, and two such lazy loops remain that only code outside the status item could end
(agents.models.batched <-> agents.models.llama_cpp over `looping`, and agents/__init__'s PEP 562 import of
agents.api, which agents.sandbox.image reaches through `from agents import __version__`). Everything a module runs
when it is imported is counted: the top level and the bodies of its classes, ifs, trys and withs.
"""

from __future__ import annotations

import ast
from typing import Iterable

from tests.conftest import ROOT

MODULES = {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): p
           for p in sorted((ROOT / "agents").rglob("*.py"))}


def _type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"
                                         or isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _own_module(name: str) -> str | None:
    """The module of agents/ that importing `name` runs: itself, else the package it sits in."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports_at_load(module: str) -> set[str]:
    """The modules of agents/ that importing `module` imports in turn (not under TYPE_CHECKING, not in functions)."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()

    def visit(nodes: Iterable[ast.AST]) -> None:
        for child in nodes:
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if _type_checking(child):
                visit(child.orelse)  # type: ignore[attr-defined]
                continue
            if isinstance(child, ast.Import):
                found.update(alias.name for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parent = package.split(".")[:len(package.split(".")) - (child.level - 1)]
                    base = ".".join([*parent, *([base] if base else [])])
                found.update(f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in child.names)
            else:
                visit(ast.iter_child_nodes(child))

    visit(ast.parse(path.read_text(encoding="utf-8"), str(path)).body)
    return {own for name in found if (own := _own_module(name)) is not None and own != module}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One loop in the graph, as the modules along it (the first repeated at the end), or None."""
    done: set[str] = set()
    path: list[str] = []

    def walk(node: str) -> list[str] | None:
        if node in path:
            return path[path.index(node):] + [node]
        if node in done:
            return None
        path.append(node)
        for nxt in sorted(graph[node]):
            if (loop := walk(nxt)) is not None:
                return loop
        path.pop()
        done.add(node)
        return None

    for start in sorted(graph):
        if (loop := walk(start)) is not None:
            return loop
    return None


def test_no_import_cycle_in_the_package():
    graph = {m: imports_at_load(m) for m in MODULES}
    loop = find_cycle(graph)
    assert loop is None, "import cycle: " + " -> ".join(loop or [])


def test_the_check_sees_a_cycle_and_what_it_skips():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None
    assert "agents.status" in imports_at_load("agents.strategy")  # a plain module-level import
    assert "agents.budget" not in imports_at_load("agents.status")  # only under TYPE_CHECKING
    assert "agents.models.batched" not in imports_at_load("agents.models.llama_cpp")  # only inside a function
