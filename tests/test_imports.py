"""The import graph of agents/, read with ast: no circle, counting every import, and no needless lazy import.

Every import counts: the top level, the bodies of classes, ifs, trys and withs, the imports under
`if TYPE_CHECKING:` (they say which module a module's types come from) and those inside functions (they run on
first call). An import inside a function that importing the module has already run (the module's top level loads
it, directly or through another module) is needless, and is flagged too.
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


def _imported(module: str, node: ast.Import | ast.ImportFrom) -> set[str]:
    """The modules of agents/ one import statement of `module` names."""
    if isinstance(node, ast.Import):
        names = {alias.name for alias in node.names}
    else:
        package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
        base = node.module or ""
        if node.level:
            parent = package.split(".")[:len(package.split(".")) - (node.level - 1)]
            base = ".".join([*parent, *([base] if base else [])])
        names = {f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names}
    return {own for name in names if (own := _own_module(name)) is not None and own != module}


def imports(module: str, at_load: bool = False) -> set[str]:
    """The modules of agents/ that `module` imports: all of them, or with `at_load` only those that importing it
    runs (not under TYPE_CHECKING, not inside a function)."""
    found: set[str] = set()

    def visit(nodes: Iterable[ast.AST]) -> None:
        for child in nodes:
            if at_load and isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if at_load and _type_checking(child):
                visit(child.orelse)  # type: ignore[attr-defined]
            elif isinstance(child, (ast.Import, ast.ImportFrom)):
                found.update(_imported(module, child))
            else:
                visit(ast.iter_child_nodes(child))

    visit(ast.parse(MODULES[module].read_text(encoding="utf-8"), str(MODULES[module])).body)
    return found


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


def loaded_with(module: str, graph: dict[str, set[str]]) -> set[str]:
    """Every module that importing `module` loads: its load-time imports, theirs, and the packages they sit in."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        for nxt in graph[todo.pop()]:
            for package in (".".join(nxt.split(".")[:i]) for i in range(1, nxt.count(".") + 2)):
                if package in MODULES and package not in seen:
                    seen.add(package)
                    todo.append(package)
    return seen


def needless_lazy_imports(module: str, graph: dict[str, set[str]]) -> list[str]:
    """'module:line imports x' for each import inside a function of a module that is loaded already."""
    loaded = loaded_with(module, graph)
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    lazy = {node for f in functions for node in ast.walk(f) if isinstance(node, (ast.Import, ast.ImportFrom))}
    return sorted(f"{module}:{node.lineno} imports {name}" for node in lazy
                  for name in _imported(module, node) if name in loaded)


def test_no_import_cycle_in_the_package_counting_every_import():
    loop = find_cycle({m: imports(m) for m in MODULES})
    assert loop is None, "import cycle: " + " -> ".join(loop or [])


def test_no_lazy_import_of_a_module_already_loaded():
    graph = {m: imports(m, at_load=True) for m in MODULES}
    assert [hit for m in MODULES for hit in needless_lazy_imports(m, graph)] == []


def test_the_check_sees_every_kind_of_import():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None
    assert "agents.loop.status" in imports("agents.record.transcript", at_load=True)  # a plain module-level import
    assert "agents.loop.budget" in imports("agents.loop.attempt_summary")  # only under TYPE_CHECKING
    assert "agents.loop.budget" not in imports("agents.loop.attempt_summary", at_load=True)
    assert "agents.scenario.spec" in imports("agents.cli.app")  # only inside a function (--help stays fast)
    assert "agents.scenario.spec" not in imports("agents.cli.app", at_load=True)
    graph = {m: imports(m, at_load=True) for m in MODULES}
    assert {"agents.loop.errors", "agents.models"} <= loaded_with("agents.models.config", graph)
