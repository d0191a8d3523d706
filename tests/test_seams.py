"""The seams stay tidy: no library import of the CLI, AG2 private state only in the adapter, one image constant,
and every implementation satisfies the Protocol it is used as."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.conftest import ROOT

AGENTS = ROOT / "agents"
MODULES = sorted(AGENTS.rglob("*.py"))


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def _imported_modules(tree: ast.Module) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def _console_entry_points() -> set[Path]:
    """The modules named in pyproject's [project.scripts] (`name = "pkg.module:function"`)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    section = re.search(r"^\[project\.scripts\]\n(.*?)(?=^\[|\Z)", text, re.M | re.S)
    targets = re.findall(r'=\s*"([\w.]+):', section.group(1)) if section else []
    return {ROOT / (t.replace(".", "/") + ".py") for t in targets}


def test_no_library_module_imports_the_cli():
    allowed = {AGENTS / "cli" / "app.py", AGENTS / "__main__.py", *_console_entry_points()}
    offenders = [str(p.relative_to(ROOT)) for p in MODULES
                 if p not in allowed and "agents.cli.app" in _imported_modules(_tree(p))]
    assert offenders == [], "only run.py and the console entry point may import agents/cli/app.py"


def _ag2_private_names() -> set[str]:
    """Every `_name` (not dunder) an AG2 agent has, on its classes or its instances."""
    from autogen import AssistantAgent, UserProxyAgent

    names: set[str] = set()
    for agent in (AssistantAgent("a", llm_config=False), UserProxyAgent("u", code_execution_config=False)):
        for owner in (*type(agent).__mro__, agent):
            names |= {n for n in vars(owner) if n.startswith("_") and not n.startswith("__")}
    return names


def test_ag2_private_attributes_are_touched_only_in_the_adapter():
    private = _ag2_private_names()
    assert "_oai_messages" in private and "_is_termination_msg" in private  # the scan sees AG2's privates
    hits = [f"{p.relative_to(ROOT)}:{node.lineno} {node.attr}" for p in MODULES if p.name != "ag2_adapter.py"
            for node in ast.walk(_tree(p)) if isinstance(node, ast.Attribute) and node.attr in private]
    assert hits == [], "put AG2 private access in agents/loop/ag2_adapter.py, with why no public API does it"


def test_the_proxy_overrides_no_private_ag2_method_by_accident():
    from agents.loop.proxy import SandboxProxy

    own = {n for n, v in vars(SandboxProxy).items() if n.startswith("_") and not n.startswith("__") and callable(v)}
    assert own and not own & _ag2_private_names()


def test_the_sandbox_image_name_is_written_once():
    from agents.loop.defaults import SANDBOX_IMAGE

    places = [str(p.relative_to(ROOT)) for p in [*MODULES, ROOT / "run.py"]
              if SANDBOX_IMAGE in p.read_text(encoding="utf-8")]
    assert places == ["agents/loop/defaults.py"]


@pytest.mark.parametrize("entry", [
    {"provider": "scripted", "replies": ["hi"]},
    {"provider": "llama_cpp", "model_path": "/nonexistent/model.gguf"},
    {"provider": "openai", "model": "gpt-4o-mini", "api_key_optional": True},
], ids=lambda e: e["provider"])
def test_every_provider_satisfies_the_model_provider_protocol(entry):
    from agents.loop.protocols import ModelProvider
    from agents.models.config import build_provider

    provider = build_provider(entry)
    assert isinstance(provider, ModelProvider)
    assert provider.secrets() == []  # no key: nothing to scrub


def test_displays_and_the_recorder_satisfy_their_protocols(tmp_path):
    from rich.console import Console

    from agents.loop.protocols import Display, Recorder
    from agents.record.display import ConsoleDisplay, NullDisplay
    from agents.record.transcript import JsonlRecorder

    console = Console(file=open(tmp_path / "out.txt", "w"))
    assert isinstance(NullDisplay(), Display) and NullDisplay().console is None
    assert isinstance(ConsoleDisplay(console), Display) and ConsoleDisplay(console).console is console
    recorder = JsonlRecorder(tmp_path, {"run_id": "x"})
    try:
        assert isinstance(recorder, Recorder)
    finally:
        recorder.finish("error", "test")
    console.file.close()


def test_the_bench_options_default_to_the_bench_config():
    """The defaults live in BenchConfig only: an option left out is not passed (None), and a default its help names
    is BenchConfig's."""
    import inspect

    from agents.bench.cli import bench_humaneval
    from agents.bench.humaneval.config import BenchConfig

    defaults = BenchConfig()
    options = inspect.signature(bench_humaneval).parameters
    for name, p in options.items():
        assert p.default.default in (None, getattr(defaults, name)), name
        said = re.search(r"\(default (\w+)\)", p.default.help or "")
        if said:
            assert said.group(1) == str(getattr(defaults, name)), (name, said.group(1))


def test_nothing_in_the_product_imports_the_benchmarks():
    """The benchmarks use the product, never the other way round: no module outside agents/bench/ imports it, but
    for the CLI, which adds the `bench` commands of agents/bench/cli.py (whose functions import the rest)."""
    offenders = []
    for path in (ROOT / "agents").rglob("*.py"):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("agents/bench/"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            allowed = rel == "agents/cli/app.py" and names == ["agents.bench.cli"]
            if any(n == "agents.bench" or n.startswith("agents.bench.") for n in names) and not allowed:
                offenders.append(f"{rel}:{node.lineno}")
    assert not offenders, f"the product imports the benchmarks at: {offenders}"


def test_the_package_holds_no_benchmark_script():
    """`python -m` scripts (soak, batch_load, ray_scaleout, ...) start run.py of a checkout: they live in
    benchmarks/, not in the installed package, whose only script is `python -m agents` (issue 41). The scripts that
    run inside the sandbox (agents/sandbox/incontainer/, written into the workspace by the checks) are not such."""
    incontainer = ROOT / "agents" / "sandbox" / "incontainer"
    scripts = [p.relative_to(ROOT).as_posix() for p in (ROOT / "agents").rglob("*.py")
               if p.name != "__main__.py" and incontainer not in p.parents
               and re.search(r"^if __name__ == .__main__.:", p.read_text(encoding="utf-8"), re.M)]
    assert scripts == [], f"move these scripts to benchmarks/: {scripts}"
    assert (ROOT / "benchmarks" / "soak.py").is_file() and "benchmarks" not in (ROOT / "pyproject.toml").read_text(
        encoding="utf-8").split("[tool.setuptools.packages.find]")[1].split("\n[")[0]


def test_every_ag2_hook_is_installed_in_the_adapter():
    """agents/loop/ag2_adapter.py is the only module that installs anything into AG2 (reply functions, hooks, the output
    stream): the turn policy's decisions reach AG2 through it alone (issue 21 part 1)."""
    hooks = {"replace_reply_func", "register_hook", "register_reply", "IOStream", "generate_oai_reply",
             "check_termination_and_human_reply"}
    found = []
    for path in (ROOT / "agents").rglob("*.py"):
        rel = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                name = next((a.name for a in node.names if a.name in hooks), None)
            else:
                name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
            if name in hooks:
                found.append(rel)
    assert found and set(found) == {"agents/loop/ag2_adapter.py"}, sorted(set(found))


def test_the_turn_policy_is_plain_python():
    """Every decision about a reply is in agents/loop/turn_policy.py, which does not import AG2."""
    import subprocess
    import sys

    probe = "import sys, agents.loop.turn_policy; print('autogen' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert out.strip() == "False"


ROLE_WORDS = {"planner", "developer", "qa"}


def test_no_role_name_is_spelled_outside_the_one_roles_definition():
    """A team's role names are string literals in agents/loop/roles.py only: the schema, the team, the transcript,
    the terminal, the HTML page, replay, resume, the exports and the page's task box read ROLES (issue 55)."""
    spelled = []
    for path in MODULES:
        if path == AGENTS / "loop" / "roles.py":
            continue
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.lower() in ROLE_WORDS:
                spelled.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.value!r}")
    assert spelled == []


SESSION_MODULES = {"kernel.py", "kernel_executor.py", "ag2_kernel_executor.py"}


def test_the_kernel_session_is_a_place_not_a_flag():
    """The kernel session is an executor of its own behind the Executor protocol (issue 55): the loop never probes
    an executor with getattr/hasattr nor compares a session name, and no function of the sandbox outside the
    kernel's own modules takes a `kernel` parameter."""
    found = []
    for path in MODULES:
        rel = path.relative_to(AGENTS)
        for node in ast.walk(_tree(path)):
            if rel.parts[0] == "loop" and isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id in ("getattr", "hasattr") and node.args \
                    and isinstance(node.args[0], ast.Name) and "executor" in node.args[0].id:
                found.append(f"{rel}:{node.lineno} {node.func.id}(executor, ...)")
            if rel.parts[0] == "loop" and isinstance(node, ast.Constant) and node.value == "kernel":
                found.append(f"{rel}:{node.lineno} 'kernel'")
            if rel.parts[0] == "sandbox" and rel.name not in SESSION_MODULES \
                    and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names = [a.arg for a in (*node.args.args, *node.args.kwonlyargs)]
                found += [f"{rel}:{node.lineno} {node.name}({n})" for n in names if "kernel" in n]
    assert found == []
