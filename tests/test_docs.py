"""The docs match the code: every module the architecture page names exists, the README stays short, the
transcript keys the docs name are keys a real transcript has, and every codeduet command and flag, make target,
repository file and module that README.md or docs/*.md names exists (in-process, a few seconds)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from agents.loop.conversation import RunOptions, run_scenario
from agents.scenario.spec import load_scenario
from tests.conftest import ROOT, py
from tests.test_imports import MODULES, imports

ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"


def test_every_module_the_architecture_page_names_exists():
    text = ARCHITECTURE.read_text(encoding="utf-8")
    named = set(re.findall(r"agents/[\w/]*\w(?:\.py)?/?", text))
    missing = sorted(n for n in named if not (ROOT / n).exists())
    assert not missing, f"docs/ARCHITECTURE.md names modules that do not exist: {missing}"


def _page_name(module: str) -> str:
    """How the page names a module: agents/x/y.py, or agents/x/ for a package."""
    path = MODULES[module].relative_to(ROOT).as_posix()
    return path.removesuffix("__init__.py") if path.endswith("__init__.py") else path


def test_the_architecture_page_names_every_module_of_the_package():
    text = ARCHITECTURE.read_text(encoding="utf-8")
    unnamed = sorted(_page_name(m) for m in MODULES if _page_name(m) not in text)
    assert not unnamed, f"docs/ARCHITECTURE.md never names: {unnamed}"


def test_the_package_has_at_most_twelve_entries_and_the_folder_table_names_exactly_them():
    """agents/ grouped by concern (issue 55): at most a dozen top-level entries, each in ARCHITECTURE.md's folder
    table, and nothing in that table that is not there."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    table = text[text.index("## The package's folders"):text.index("```")]
    listed = set(re.findall(r"^\| (agents/[\w.]+/?) \|", table, re.M))
    present = {f"agents/{p.name}" + ("/" if p.is_dir() else "") for p in (ROOT / "agents").iterdir()
               if p.name != "__pycache__"}
    assert len(present) <= 12, sorted(present)
    assert listed == present


ARROW = re.compile(r"[├└]─▶\s*(agents/[\w/]*\w(?:\.py|/))")
NODE = re.compile(r"agents/[\w/]*\w(?:\.py|/)")


def architecture_arrows(diagram: str) -> list[tuple[str, str]]:
    """(importer, imported) for every arrow between two modules in the diagram: a tree arrow (├─▶, └─▶) from the
    nearest module above it that starts left of it, and `A ──▶ B` on one line."""
    by_path = {_page_name(m): m for m in MODULES}
    arrows, above = [], []  # above: (column, module) of the lines so far
    for line in diagram.splitlines():
        if (tree := ARROW.search(line)) is not None:
            column = tree.start(1)
            parent = next((mod for col, mod in reversed(above) if col < tree.start()), None)
            if parent is not None and tree.group(1) in by_path:
                arrows.append((parent, by_path[tree.group(1)]))
            above.append((column, by_path.get(tree.group(1))))
        elif line[:1].strip():  # a line of its own: its module is the one an arrow leads to, else its first
            arrow, first = re.search(r"──▶\s*(agents/[\w/]*\w(?:\.py|/))", line), NODE.search(line)
            above.append((0, by_path.get(arrow.group(1) if arrow else first.group(0) if first else "")))
        for left, right in re.findall(r"(agents/[\w/]*\w(?:\.py|/))\s+──▶\s+(agents/[\w/]*\w(?:\.py|/))", line):
            if left in by_path and right in by_path:
                arrows.append((by_path[left], by_path[right]))
    return [(a, b) for a, b in arrows if a is not None]


def test_every_arrow_of_the_architecture_diagram_is_an_import():
    text = ARCHITECTURE.read_text(encoding="utf-8")
    diagram = text[text.index("```") + 3:text.index("```", text.index("```") + 3)]
    arrows = architecture_arrows(diagram)
    assert len(arrows) > 30, arrows
    wrong = [f"{a} -> {b}" for a, b in arrows if b not in imports(a)]
    assert not wrong, f"docs/ARCHITECTURE.md draws arrows that are not imports: {wrong}"
    backwards = "agents/loop/errors.py   the errors\n  ├─▶ agents/cli/app.py\n  │     └─▶ agents/cli/chat.py\n"
    assert architecture_arrows(backwards) == [("agents.loop.errors", "agents.cli.app"),
                                              ("agents.cli.app", "agents.cli.chat")]
    assert "agents.cli.app" not in imports("agents.loop.errors")  # such an arrow would fail the check above


def test_the_cli_reference_is_what_the_commands_print():
    """docs/CLI.md is made from every command's --help (tests/cli_reference.py): a new flag, a changed help text or
    a removed command fails here until `make docs` is run."""
    from tests.cli_reference import PAGE, render

    assert PAGE.read_text(encoding="utf-8") == render(), "docs/CLI.md is out of date: run `make docs`"


def test_every_option_says_what_to_type_not_its_python_type():
    text = (ROOT / "docs" / "CLI.md").read_text(encoding="utf-8")
    for placeholder in ("<bool>", "<int", "<float", "<str>", "<path>", "list[", "{scenarios}"):
        assert placeholder not in text, placeholder
    assert "Usage: codeduet run [OPTIONS] SCENARIO..." in text and "--attempts              N [x>=1]" in text


def test_the_readme_is_short_and_links_what_it_moved_out():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 210
    for page in re.findall(r"\]\((docs/[\w./-]+)\)", readme):
        assert (ROOT / page).is_file(), page
    for page in ("ARCHITECTURE", "STRATEGY", "BENCHMARKS", "FILES", "SANDBOX", "MODELS", "SECURITY", "SCALING"):
        assert f"docs/{page}.md" in readme, page


def test_the_transcript_keys_the_docs_name_exist(workspaces, loop_file):
    result = run_scenario(load_scenario(loop_file([py("print(1)")])), RunOptions())
    t = json.loads((result.run_dir / "transcript.json").read_text())
    text = ARCHITECTURE.read_text(encoding="utf-8")
    listed = text[text.index("`transcript.json` holds:"):text.index("When `transcript.json` is missing")]
    keys = set(t) | set(t["totals"]) | {k for m in t["messages"] for k in m} | {k for a in t["attempts"] for k in a}
    named = set(re.findall(r"`([a-z_]+)`", listed)) - {"success", "failed", "max_replies", "timeout", "interrupted",
                                                        "error", "repeat", "cut", "no_code", "task", "assistant",
                                                        "execution", "user_proxy", "human"}
    assert named and not named - keys, f"not in a transcript: {sorted(named - keys)}"


# -- docs that cannot drift: every command, flag, make target and repository file a doc names exists -------------

DOCS = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "CLI.md")]
"""docs/CLI.md is left out: it is the commands' own --help (test_the_cli_reference_is_what_the_commands_print)."""
HISTORICAL = "of that time"
"""A paragraph quoting a past command or file says so (`(flags of that time; today: ...)`): it is not checked."""
OTHER_TOOLS = {"--help", "--rm",  # docker run
               "--head", "--address", "--resources",  # ray start
               "--rounds",  # python -m benchmarks.ray_scaleout (argparse, not the codeduet app)
               "--hypothesis-profile",  # pytest (tests/conftest.py)
               "--runs", "--ray-runs", "--viewers",  # python -m benchmarks.soak (argparse)
               "--table",  # python -m benchmarks.team_vs_pair (argparse)
               "--mar", "--locals",  # an uncommitted experiment script BENCHMARKS.md describes
               "--edition", "--test", "--include-ignored",  # rustc, node and cargo test (docs/LANGUAGES.md)
               "--ci", "--env", "--config",  # jest (docs/WEB.md)
               "--headless", "--no-sandbox", "--no-zygote", "--disable-gpu", "--disable-dev-shm-usage",
               "--user-data-dir", "--remote-debugging-pipe"}  # Chromium, as the page check starts it (docs/WEB.md)
EXAMPLES = {"scenarios/x.yaml", "tests/test_x.py", "tests/test_cart.py"}
"""Paths that are placeholders, or files a model wrote in its own workspace."""
INVOCATION = re.compile(r"(?<![\w./-])(?:codeduet|run\.py|python -m agents)[ \t]+([^`#\n]*)")
MAKE = re.compile(r"(?<![\w./-])make[ \t]+([a-z][\w-]*)")
FLAG = re.compile(r"(?<![\w-])(--?[a-zA-Z][\w-]*)")
REPO_PATH = re.compile(r"(?<![\w./~<>-])((?:agents|tests|scenarios|docs|configs|\.ci)/[\w./-]*[\w/])")
MODULE = re.compile(r"(?<![\w./-])(agents(?:\.\w+)+)")
MD_NAME = re.compile(r"(?<![\w./-])([\w-]+\.md)\b")


def _current(doc: Path) -> str:
    """The doc without its paragraphs marked as historical."""
    paragraphs = re.split(r"\n\s*\n", doc.read_text(encoding="utf-8"))
    return "\n\n".join(p for p in paragraphs if HISTORICAL not in " ".join(p.split()))


def _code(text: str) -> list[str]:
    """Each line of a fenced block (``` or ````), then each inline code span, joined across line breaks."""
    code, prose, fence = [], [], ""
    for line in text.splitlines():
        mark = re.match(r"\s*(`{3,}|~{3,})", line)
        if fence and mark and mark.group(1).startswith(fence) and not line.strip().strip(fence[0]):
            fence = ""
        elif fence:
            code.append(line)
        elif mark:
            fence = mark.group(1)
        else:
            prose.append(line)
    spans = re.findall(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", "\n".join(prose), re.S)
    return code + [" ".join(span.split()) for _, span in spans]


def _commands():
    """The click tree of the codeduet app, and each command's --help text (in-process, cached)."""
    import typer
    from typer.testing import CliRunner

    from agents.cli.app import app

    runner, helps = CliRunner(), {}

    def help_of(path: tuple[str, ...]) -> str:
        if path not in helps:
            result = runner.invoke(app, [*path, "--help"], prog_name="codeduet")
            assert result.exit_code == 0, (path, result.output)
            helps[path] = result.output
        return helps[path]

    return typer.main.get_command(app), help_of


def _resolve(root, words: list[str], start: tuple[str, ...] = ()) -> tuple[tuple[str, ...], str | None]:
    """The command path the words name, and the first word that should have been a command but is not."""
    cmd, path = root, list(start)
    for name in start:
        cmd = cmd.commands[name]
    for word in words:
        if not hasattr(cmd, "commands") or word in ("...", "…") or word.startswith("-"):
            break  # a leaf command, `codeduet ...` (any command) or a flag of the group (`codeduet --help`)
        if word not in cmd.commands:
            return tuple(path), word
        cmd, path = cmd.commands[word], [*path, word]
    return tuple(path), None


def test_every_codeduet_command_and_flag_the_docs_show_is_in_its_help():
    root, help_of = _commands()
    wrong = []
    for doc in DOCS:
        for line in _code(_current(doc)):
            for m in INVOCATION.finditer(line):
                first, *alternatives = re.split(r"\s\|\s", m.group(1))
                path, bad = _resolve(root, first.split())
                parts = [(path, first)]
                for alt in alternatives:  # `codeduet sandbox build | status | clean`: siblings of the last word
                    word = alt.split()[0] if alt.split() else ""
                    sibling, bad_alt = _resolve(root, [word], path[:-1])
                    bad = bad or bad_alt
                    parts.append((sibling, alt))
                if bad:
                    wrong.append(f"{doc.name}: `{m.group(0).strip()}`: no command {bad!r}")
                    continue
                for cmd_path, words in parts:
                    for flag in FLAG.findall(words):
                        if not re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", help_of(cmd_path)):
                            wrong.append(f"{doc.name}: `{m.group(0).strip()}`: {flag} is not in "
                                         f"`codeduet {' '.join(cmd_path)} --help`")
    assert not wrong, "\n".join(wrong)


def test_every_make_target_the_docs_show_exists_and_phony_names_only_targets():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([\w-]+)\s*:(?!=)", makefile, re.M))
    phony = set(re.search(r"^\.PHONY:(.*)$", makefile, re.M).group(1).split())
    assert phony <= targets, f".PHONY names targets the Makefile lacks: {sorted(phony - targets)}"
    shown = {(doc.name, t) for doc in DOCS for line in _code(_current(doc)) for t in MAKE.findall(line)}
    assert len(shown) >= 3, shown
    missing = sorted(s for s in shown if s[1] not in targets)
    assert not missing, f"docs show make targets the Makefile lacks: {missing}"


def test_every_repository_file_module_and_codeduet_flag_the_docs_name_exists():
    root, _ = _commands()
    flags = set(OTHER_TOOLS)

    def collect(cmd):
        for param in cmd.params:
            flags.update(param.opts + param.secondary_opts)
        for sub in getattr(cmd, "commands", {}).values():
            collect(sub)

    collect(root)
    md_names = {p.name for d in ("agents", "docs", "tests", "scenarios", "configs") for p in (ROOT / d).rglob("*.md")}
    md_names |= {p.name for p in ROOT.glob("*.md")}
    wrong = []
    for doc in DOCS:
        text = _current(doc)
        for path in set(REPO_PATH.findall(text)) - EXAMPLES:
            if not (ROOT / path).exists() and not (doc.parent / path).exists():
                wrong.append(f"{doc.name}: no file {path}")
        for module in set(MODULE.findall(text)):
            base = ROOT / module.replace(".", "/")
            if not base.with_suffix(".py").is_file() and not (base / "__init__.py").is_file():
                wrong.append(f"{doc.name}: no module {module}")
        wrong += [f"{doc.name}: no page {name}" for name in set(MD_NAME.findall(text)) - md_names]
        wrong += [f"{doc.name}: codeduet has no flag {flag}"
                  for flag in set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*[a-z0-9])", text)) - flags]
    assert not wrong, "\n".join(sorted(wrong))


def test_the_turn_the_architecture_page_follows_is_in_the_files_it_names():
    """"Follow one turn" (issue 55: at most four files): as many steps as its heading says, each step's first name
    defined in the step's file, and every function or method the section names defined in agents/."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text[text.index("## Follow one turn"):text.index("## What a change touches")]
    count = {"three": 3, "four": 4}[re.search(r"## Follow one turn: (\w+) files", section).group(1)]
    steps = re.findall(r"^\d\. \*\*(agents/[\w/]+\.py)\*\*(.*?)(?=^\d\. |\Z)", section, re.M | re.S)
    assert len(steps) == count

    def defined(source: str) -> set[str]:
        return set(re.findall(r"^\s*(?:def|class) (\w+)", source, re.M))

    from autogen import ConversableAgent

    everywhere = set().union(*(defined(path.read_text(encoding="utf-8")) for path in MODULES.values()))
    everywhere |= set(dir(ConversableAgent))  # AG2's own (initiate_chat)
    for path, words in steps:
        first = re.search(r"`([\w.]+)`", words).group(1).split(".")[-1]
        assert first in defined((ROOT / path).read_text(encoding="utf-8")), (path, first)
    names = {n.split(".")[-1] for n in re.findall(r"`((?:[A-Z]\w+\.)?[a-z_]+)`", section) if "_" in n or "." in n}
    assert names and names <= everywhere, names - everywhere
