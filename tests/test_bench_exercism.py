"""`bench exercism` on a tiny track of our own (the polyglot-benchmark layout, exercises written here): reading the
layout, the scenario each exercise becomes, and real runs in the language sandbox with the scripted model."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from agents.bench import exercism
from agents.bench.exercism import IMAGE, Exercise, build_scenario, discover, find_tracks
from agents.bench.exercism_run import example_files, reply_for, reply_note, run_bench, tries
from agents.loop.conversation import RunOptions, run_scenario
from agents.loop.errors import BadInputError
from agents.record.transcript import load_transcript

QUIET = Console(file=io.StringIO(), width=200)
LANGUAGES = ("c", "cpp", "go", "javascript", "rust")


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


def _exercise(track: Path, lang: str, name: str, config: dict, files: dict[str, str]) -> None:
    folder = track / lang / "exercises" / "practice" / name
    _write(folder, {".docs/instructions.md": f"# Instructions\n\n{files.pop('doc')}\n",
                    ".meta/config.json": json.dumps({"authors": ["codeduet"], "files": config}), **files})


GO = {
    "doc": "Write `Double(n int) int`, which returns twice n.",
    "go.mod": "module doubleit\n\ngo 1.18\n",
    "double_it.go": "package doubleit\n\nfunc Double(n int) int {\n\tpanic(\"Please implement Double\")\n}\n",
    "cases_test.go": "package doubleit\n\nvar cases = []struct{ in, want int }{{1, 2}, {0, 0}, {-4, -8}}\n",
    "double_it_test.go": "package doubleit\n\nimport \"testing\"\n\nfunc TestDouble(t *testing.T) {\n"
                         "\tfor _, c := range cases {\n\t\tif got := Double(c.in); got != c.want {\n"
                         "\t\t\tt.Errorf(\"Double(%d) = %d, want %d\", c.in, got, c.want)\n\t\t}\n\t}\n}\n",
    "bonus_test.go": "package doubleit\n\nimport \"testing\"\n\nfunc TestBig(t *testing.T) {\n"
                     "\tif Double(1000) != 2000 {\n\t\tt.Error(\"Double(1000)\")\n\t}\n}\n",
    ".meta/example.go": "package doubleit\n\n// Double returns twice n.\nfunc Double(n int) int {\n\treturn 2 * n\n}\n",
}
GO_CONFIG = {"solution": ["double_it.go"], "test": ["double_it_test.go"], "example": [".meta/example.go"],
             "editor": ["cases_test.go"], "invalidator": ["go.mod"]}
RUST_ZERO = "pub fn count_vowels(_text: &str) -> usize {\n    0\n}\n"
RUST = {
    "doc": "Count the vowels (a, e, i, o, u, either case) of a text.",
    "Cargo.toml": "[package]\nedition = \"2021\"\nname = \"count_vowels\"\nversion = \"0.1.0\"\n",
    "src/lib.rs": "pub fn count_vowels(text: &str) -> usize {\n    todo!(\"count the vowels of {text}\")\n}\n",
    "tests/count_vowels.rs": "use count_vowels::count_vowels;\n\n#[test]\nfn empty() {\n"
                             "    assert_eq!(count_vowels(\"\"), 0);\n}\n\n#[test]\n#[ignore]\nfn mixed() {\n"
                             "    assert_eq!(count_vowels(\"Hello World\"), 3);\n}\n",
    ".meta/example.rs": "pub fn count_vowels(text: &str) -> usize {\n"
                        "    text.chars().filter(|c| \"aeiouAEIOU\".contains(*c)).count()\n}\n",
}
RUST_CONFIG = {"solution": ["src/lib.rs", "Cargo.toml"], "test": ["tests/count_vowels.rs"],
               "example": [".meta/example.rs"]}
CRATES = {
    "doc": "Pick a lucky number.",
    "Cargo.toml": "[package]\nedition = \"2021\"\nname = \"lucky\"\nversion = \"0.1.0\"\n\n[dependencies]\n"
                  "rand = \"0.8\"\n",
    "src/lib.rs": "pub fn lucky() -> u32 {\n    todo!()\n}\n",
    "tests/lucky.rs": "#[test]\nfn small() {\n    assert!(lucky::lucky() < 10);\n}\n",
    ".meta/example.rs": "pub fn lucky() -> u32 {\n    7\n}\n",
}
CPP_CMAKE = """get_filename_component(exercise ${CMAKE_CURRENT_SOURCE_DIR} NAME)
cmake_minimum_required(VERSION 3.10)
project(${exercise} CXX)
string(REPLACE "-" "_" file ${exercise})
add_executable(${exercise} ${file}_test.cpp ${file}.cpp test/main.cpp)
set_target_properties(${exercise} PROPERTIES CXX_STANDARD 17)
if(${EXERCISM_RUN_ALL_TESTS})
    target_compile_definitions(${exercise} PRIVATE EXERCISM_RUN_ALL_TESTS)
endif()
add_custom_target(test_${exercise} ALL DEPENDS ${exercise} COMMAND ${exercise})
"""
CPP = {
    "doc": "Write `square_area::area(side)`, the area of a square.",
    "CMakeLists.txt": CPP_CMAKE,
    "square_area.h": "#pragma once\n\nnamespace square_area {\nint area(int side);\n}\n",
    "square_area.cpp": "#include \"square_area.h\"\n\nnamespace square_area {\nint area(int side) {\n"
                       "    return side - side + 1;\n}\n}  // namespace square_area\n",
    "square_area_test.cpp": "#include \"square_area.h\"\n#include \"test/check.hpp\"\n\n"
                            "CHECK_CASE(one, square_area::area(1) == 1)\n"
                            "#if defined(EXERCISM_RUN_ALL_TESTS)\n"
                            "CHECK_CASE(three, square_area::area(3) == 9)\n#endif\n",
    "test/check.hpp": "#pragma once\n#include <functional>\n#include <vector>\n\nnamespace check {\n"
                      "struct Case {\n    const char* name;\n    std::function<bool()> run;\n};\n"
                      "inline std::vector<Case>& cases() {\n    static std::vector<Case> all;\n    return all;\n}\n"
                      "struct Add {\n    Add(const char* n, std::function<bool()> f) { cases().push_back({n, f}); }\n"
                      "};\n}  // namespace check\n\n"
                      "#define CHECK_CASE(id, expr) static check::Add id(#id, [] { return (expr); });\n",
    "test/main.cpp": "#include <cstdio>\n#include \"check.hpp\"\n\nint main() {\n    int failed = 0;\n"
                     "    for (auto& c : check::cases()) {\n        bool ok = c.run();\n"
                     "        std::printf(\"%s %s\\n\", ok ? \"PASSED\" : \"FAILED\", c.name);\n"
                     "        failed += !ok;\n    }\n    return failed;\n}\n",
    ".meta/example.cpp": "#include \"square_area.h\"\n\nnamespace square_area {\nint area(int side) {\n"
                         "    return side * side;\n}\n}  // namespace square_area\n",
}
CPP_CONFIG = {"solution": ["square_area.cpp", "square_area.h"], "test": ["square_area_test.cpp"],
              "example": [".meta/example.cpp"]}
PYTHON = {
    "doc": "Write `shout(text)`: the text in capitals, with an exclamation mark.",
    "shout.py": "def shout(text):\n    pass\n",
    "shout_test.py": "import unittest\n\nfrom shout import shout\n\n\nclass ShoutTest(unittest.TestCase):\n"
                     "    def test_word(self):\n        self.assertEqual(shout(\"hi\"), \"HI!\")\n",
    ".meta/example.py": "def shout(text):\n    return text.upper() + \"!\"\n",
}
JS = {
    "doc": "Write `echo(text)`.",
    "package.json": "{\"name\": \"echo\", \"private\": true}\n",
    "echo.js": "export const echo = () => {\n  throw new Error('Remove this line and implement the function');\n};\n",
    "echo.spec.js": "import { echo } from './echo';\n\ntest('one', () => expect(echo('a')).toBe('a'));\n"
                    "xtest('two', () => expect(echo('b')).toBe('b'));\n",
    ".meta/proof.ci.js": "export const echo = (text) => text;\n",
}


@pytest.fixture
def track(tmp_path: Path) -> Path:
    """A polyglot-benchmark-shaped track of five exercises of our own (one needs crates.io)."""
    root = tmp_path / "track"
    _exercise(root, "go", "double-it", GO_CONFIG, dict(GO))
    _exercise(root, "rust", "count-vowels", RUST_CONFIG, dict(RUST))
    _exercise(root, "rust", "lucky-number", {"solution": ["src/lib.rs", "Cargo.toml"], "test": ["tests/lucky.rs"],
                                             "example": [".meta/example.rs"]}, dict(CRATES))
    _exercise(root, "cpp", "square-area", CPP_CONFIG, dict(CPP))
    _exercise(root, "cpp", "boost-dates", {"solution": ["boost_dates.cpp"], "test": ["boost_dates_test.cpp"],
                                           "example": [".meta/example.cpp"]},
              {"doc": "Add a day to a date.", "CMakeLists.txt": "find_package(Boost 1.58 REQUIRED COMPONENTS "
               "date_time)\nfind_package(Threads REQUIRED)\n", "boost_dates.cpp": "", "boost_dates_test.cpp": "",
               ".meta/example.cpp": ""})
    _exercise(root, "python", "shout", {"solution": ["shout.py"], "test": ["shout_test.py"],
                                        "example": [".meta/example.py"]}, dict(PYTHON))
    _exercise(root, "javascript", "echo", {"solution": ["echo.js"], "test": ["echo.spec.js"],
                                           "example": [".meta/proof.ci.js"]}, dict(JS))
    return root


@pytest.fixture(scope="session")
def language_image() -> str:
    """The sandbox image with every toolchain, built locally when it is missing (never pulled)."""
    from tests.helpers import toolchains_image

    return toolchains_image()


def _one(exercises: list[Exercise], key: str) -> Exercise:
    return next(e for e in exercises if e.key == key)


# -- the layout ---------------------------------------------------------------------------------------------------

def test_a_polyglot_checkout_is_read_with_every_exercise_listed(track):
    exercises = discover(track)
    assert [e.key for e in exercises] == ["cpp/boost-dates", "cpp/square-area", "go/double-it", "javascript/echo",
                                          "python/shout", "rust/count-vowels", "rust/lucky-number"]
    go = _one(exercises, "go/double-it")
    assert go.skip is None and go.solution == ["double_it.go"] and go.editor == ["cases_test.go"]
    assert go.hidden() == ["double_it_test.go", "bonus_test.go"]  # every *_test.go but the editor's
    assert go.support() == ["cases_test.go", "go.mod"]
    rust = _one(exercises, "rust/count-vowels")
    assert rust.hidden() == ["tests"] and rust.support() == []
    cpp = _one(exercises, "cpp/square-area")
    assert cpp.hidden() == ["square_area_test.cpp", "test"] and cpp.support() == ["CMakeLists.txt"]
    assert "Write `Double(n int) int`" in go.instructions()
    lucky = _one(exercises, "rust/lucky-number")
    assert lucky.skip == 'needs crates from crates.io (rand = "0.8"); the sandbox is offline'
    assert _one(exercises, "javascript/echo").skip is None  # Debian's jest and babel run its tests
    assert _one(exercises, "cpp/boost-dates").skip.startswith("its CMakeLists.txt requires Boost (find_package)")


def test_one_track_checkout_is_read_by_its_config_or_its_folder_name(track, tmp_path):
    assert find_tracks(track / "go") == {"go": track / "go"}
    renamed = tmp_path / "somewhere"
    (track / "rust").rename(renamed)
    (renamed / "config.json").write_text(json.dumps({"language": "Rust", "slug": "rust"}), encoding="utf-8")
    assert [e.key for e in discover(renamed)] == ["rust/count-vowels", "rust/lucky-number"]
    (renamed / "config.json").unlink()
    assert [e.key for e in discover(renamed)][0] == "rust/count-vowels"  # told by its stubs' suffix


def test_selection_by_language_name_and_limit(track):
    assert [e.key for e in discover(track, languages=["rust"], limit=1)] == ["rust/count-vowels"]
    assert [e.key for e in discover(track, languages=["rust"], sample=1)] == ["rust/count-vowels"]
    assert [e.key for e in discover(track, languages=["rust"], sample=2)] == ["rust/count-vowels",
                                                                              "rust/lucky-number"]
    assert [e.key for e in discover(track, only=["shout", "go/double-it"])] == ["go/double-it", "python/shout"]
    with pytest.raises(BadInputError, match="no such exercise"):
        discover(track, only=["nope"])
    with pytest.raises(BadInputError, match="unknown"):
        discover(track, languages=["cobol"])
    with pytest.raises(BadInputError, match="neither an Exercism track"):
        discover(track / "go" / "exercises")


def test_a_sample_is_spread_over_the_names_not_the_first_ones():
    names = [f"ex{i:02d}" for i in range(10)]
    assert exercism.spread(names, 3) == ["ex00", "ex03", "ex06"]
    assert exercism.spread(names, 5) == ["ex00", "ex02", "ex04", "ex06", "ex08"]
    assert exercism.spread(names, 12) == names


def test_registry_crates_are_found_and_path_crates_are_not():
    toml = ('[dependencies.macros]\npath = "../../"\n\n[dependencies]\nrand = "0.8"\nlocal = { path = "x" }\n'
            '\n[dev-dependencies]\nserde = { version = "1" }\n\n[features]\nio = []\n')
    assert exercism.registry_crates(toml) == ['rand = "0.8"', "serde"]


def test_a_scripted_reply_that_cannot_pass_says_why(track):
    rust = _one(discover(track), "rust/count-vowels")
    assert reply_note(rust, "example") is None
    (rust.path / ".meta" / "Cargo-example.toml").write_text(RUST["Cargo.toml"] + '\n[dependencies]\nregex = "1"\n')
    assert reply_note(rust, "example") == 'the example uses crates from crates.io (regex = "1")'
    (rust.path / "src" / "lib.rs").write_text("/// ```\n/// assert!(true);\n/// ```\n" + RUST["src/lib.rs"])
    assert reply_note(rust, "stub").startswith("src/lib.rs holds ``` (a doc-test fence)")


def test_the_scenario_keeps_the_tests_hidden_and_allows_two_replies(track, tmp_path):
    go = _one(discover(track), "go/double-it")
    scenario = build_scenario(go, tmp_path / "s", reply_for(go, "example"))
    assert list(scenario.files) == ["double_it.go", "cases_test.go", "go.mod"]  # the stubs first in the preview
    check = scenario.checks[0]
    assert check.command == "go test ./..." and set(check.files) == {"double_it_test.go", "bonus_test.go"}
    assert (tmp_path / "s" / "hidden" / "bonus_test.go").is_file()
    assert scenario.user_proxy.max_consecutive_auto_reply == 1
    assert (scenario.strategy.attempts, scenario.strategy.candidates, scenario.strategy.max_resamples) == (1, 1, 0)
    assert "change the files you were given: double_it.go" in scenario.task and "go test ./..." in scenario.task
    assert scenario.sandbox.languages == ["go"] and scenario.sandbox.image == IMAGE
    reply = scenario.model["replies"][0]
    assert "// filename: double_it.go\npackage doubleit" in reply and "return 2 * n" in reply
    assert example_files(_one(discover(track), "cpp/square-area")) == {"square_area.cpp": CPP[".meta/example.cpp"]}
    build_scenario(_one(discover(track), "javascript/echo"), tmp_path / "js")
    assert "xtest" not in (tmp_path / "js" / "hidden" / "echo.spec.js").read_text()  # un-skipped as aider does


# -- real runs in the language sandbox ----------------------------------------------------------------------------

@pytest.mark.docker
@pytest.mark.slow
def test_the_example_solutions_pass_every_exercise_on_the_first_try(track, tmp_path, language_image):
    summary = run_bench(QUIET, track, reply="example", root=tmp_path / "bench", out=tmp_path / "out.json")
    rows = {f"{r['language']}/{r['exercise']}": r for r in summary["exercises"]}
    assert sorted(rows) == ["cpp/square-area", "go/double-it", "javascript/echo", "python/shout",
                            "rust/count-vowels"]
    assert all(r["passed_1"] and r["passed_2"] and r["replies"] == 1 for r in rows.values()), rows
    assert {(s["language"], s["exercise"]) for s in summary["skipped"]} == {
        ("rust", "lucky-number"), ("cpp", "boost-dates")}
    assert summary["languages"]["rust"] == {**summary["languages"]["rust"], "run": 1, "passed_1": 1, "skipped": 1}
    assert json.loads((tmp_path / "out.json").read_text())["total"]["passed_1"] == 5
    assert len((tmp_path / "bench" / "results.jsonl").read_text().splitlines()) == 5
    # the hidden tests ran (every case of the C++ one: EXERCISM_RUN_ALL_TESTS), and never stayed in the workspace
    cpp = load_transcript(Path(rows["cpp/square-area"]["run_dir"]))
    check = next(m for m in cpp["messages"] if m["role"] == "execution")["outcome"]["checks"][0]
    assert check["passed"], check
    hidden = {"double_it_test.go", "bonus_test.go", "count_vowels.rs", "square_area_test.cpp", "check.hpp",
              "main.cpp", "shout_test.py", "echo.spec.js"}
    for row in rows.values():
        assert not [p for p in (Path(row["run_dir"]) / "workspace").rglob("*") if p.name in hidden]


@pytest.mark.docker
@pytest.mark.slow
def test_the_unchanged_stubs_fail_every_exercise(track, tmp_path, language_image):
    summary = run_bench(QUIET, track, reply="stub", root=tmp_path / "bench")
    assert len(summary["exercises"]) == 5
    assert not any(r["passed_1"] or r["passed_2"] for r in summary["exercises"]), summary["exercises"]
    assert summary["total"]["rate_2"] == 0.0


@pytest.mark.docker
@pytest.mark.slow
def test_two_tries_the_repair_sees_the_test_output_and_ignored_tests_count(track, tmp_path, language_image):
    rust = _one(discover(track), "rust/count-vowels")
    fix = "```rust\n// filename: src/lib.rs\n" + RUST[".meta/example.rs"] + "```\n"
    zero = "```rust\n// filename: src/lib.rs\n" + RUST_ZERO + "```\n"  # passes `empty`, fails the #[ignore]d one
    scenario = build_scenario(rust, tmp_path / "s", [zero, fix])
    result = run_scenario(scenario, RunOptions(human="never", workspaces=tmp_path / "runs"))
    messages = load_transcript(result.run_dir)["messages"]
    assert result.status == "success" and tries(messages) == [False, True]
    report = [m for m in messages if m["role"] == "execution"][0]["content"]
    assert "mixed" in report  # the first reply's report names the failing test, as aider's second try sees it


@pytest.mark.docker
def test_no_third_reply(track, tmp_path, language_image):
    shout = _one(discover(track), "python/shout")
    wrong = ["```python\n# filename: shout.py\ndef shout(text):\n    return text" + s + "\n```\n"
             for s in (".upper()", " + '!'")]
    right = "```python\n# filename: shout.py\n" + PYTHON[".meta/example.py"] + "```\n"
    scenario = build_scenario(shout, tmp_path / "s", [*wrong, right])
    result = run_scenario(scenario, RunOptions(human="never", workspaces=tmp_path / "runs"))
    messages = load_transcript(result.run_dir)["messages"]
    assert result.status != "success" and tries(messages) == [False, False]
    assert sum(m["role"] == "assistant" for m in messages) == 2


@pytest.mark.docker
def test_the_cli_runs_a_track_and_writes_the_json(track, tmp_path, language_image, monkeypatch):
    from agents.cli.app import app

    monkeypatch.chdir(tmp_path)
    out = tmp_path / "r.json"
    result = CliRunner().invoke(app, ["bench", "exercism", "--track", str(track), "--languages", "python,js",
                                      "--reply", "example", "--out", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["languages"]["python"]["passed_1"] == 1 and data["languages"]["javascript"]["passed_1"] == 1
    assert data["skipped"] == [] and "skipped javascript" not in result.output
    bad = CliRunner().invoke(app, ["bench", "exercism", "--track", str(track), "--reply", "nope"])
    assert bad.exit_code == 2


# -- today's tracks: a newer go directive lowered, an example that needs a newer compiler listed apart ---------------

GO_NEW = {**GO, "go.mod": "module doubleit\n\ngo 1.26\n"}
WAIT_GROUP_GO = ("package doubleit\n\nimport \"sync\"\n\n// Double returns twice n, from a goroutine started by "
                 "WaitGroup.Go (Go 1.25).\nfunc Double(n int) int {\n\tvar wg sync.WaitGroup\n\tout := 0\n"
                 "\twg.Go(func() { out = 2 * n })\n\twg.Wait()\n\treturn out\n}\n")
LEAP = {**RUST, ".meta/example.rs": "pub fn count_vowels(text: &str) -> usize {\n    let n = text.chars()"
        ".filter(|c| \"aeiouAEIOU\".contains(*c)).count() as u32;\n    if n.is_multiple_of(1) { n as usize } "
        "else { 0 }\n}\n"}
NEWER_RUST = {**RUST, "Cargo.toml": RUST["Cargo.toml"] + "rust-version = \"1.99\"\n"}
E0658 = ("it exited with 101:\nerror[E0658]: use of unstable library feature `unsigned_is_multiple_of`\n"
         " --> src/lib.rs:3:10\n3 |     year.is_multiple_of(4) && !year.is_multiple_of(100)\n"
         "  |          ^^^^^^^^^^^^^^\n")
VERSIONS = {"go": "1.24", "rustc": "1.85"}


@pytest.fixture
def today(tmp_path: Path) -> Path:
    """Exercises shaped as today's exercism tracks are: go.mod at `go 1.26`, and examples that need a newer Go or
    rustc than the image's (WaitGroup.Go, u32::is_multiple_of, a Cargo.toml rust-version)."""
    root = tmp_path / "today"
    _exercise(root, "go", "double-it", GO_CONFIG, dict(GO_NEW))
    _exercise(root, "go", "double-wait", GO_CONFIG, {**GO_NEW, ".meta/example.go": WAIT_GROUP_GO})
    _exercise(root, "rust", "count-vowels", RUST_CONFIG, dict(LEAP))
    _exercise(root, "rust", "count-newer", RUST_CONFIG, dict(NEWER_RUST))
    return root


def test_a_newer_go_directive_is_lowered_to_the_image_go_and_said(today, tmp_path):
    from agents.bench.exercism_toolchain import lower_go_mod, parse_versions

    assert parse_versions("go1.24.4\nrustc 1.85.1 (4eb161250 2025-03-15)\n") == VERSIONS
    assert lower_go_mod("module x\n\ngo 1.26\n\ntoolchain go1.26.1\n", "1.24") == (
        "module x\n\ngo 1.24\n\n", "go.mod directive lowered 1.26 -> 1.24")
    assert lower_go_mod("module x\n\ngo 1.18\n", "1.24") == ("module x\n\ngo 1.18\n", None)  # older: kept
    assert lower_go_mod("module x\n\ngo 1.26\n", None)[1] is None  # no Go in the image: nothing to lower to
    go = _one(discover(today), "go/double-it")
    scenario = build_scenario(go, tmp_path / "s", reply_for(go, "example"), versions=VERSIONS)
    assert scenario.files["go.mod"] == "module doubleit\n\ngo 1.24\n"
    assert go.adapted == ["go.mod directive lowered 1.26 -> 1.24"]
    assert build_scenario(go, tmp_path / "s2").files["go.mod"].endswith("go 1.26\n") and go.adapted == []


def test_a_newer_compiler_is_told_apart_from_a_failure_by_the_compiler_s_own_error(today):
    from agents.bench.exercism_toolchain import manifest_needs, newer_compiler

    assert newer_compiler(E0658, VERSIONS) == ("needs a rustc newer than 1.85: use of unstable library feature "
                                               "`unsigned_is_multiple_of` (`is_multiple_of` at src/lib.rs:3)")
    assert newer_compiler("error: package `x v0.1.0` cannot be built because it requires rustc 1.87 or newer",
                          VERSIONS) == "needs rustc >= 1.87 (the image has rustc 1.85)"
    assert newer_compiler("go: go.mod requires go >= 1.26 (running go 1.24.4; GOTOOLCHAIN=local)", VERSIONS) \
        == "needs go >= 1.26 (go.mod; the image has go 1.24)"
    lowered = ["go.mod directive lowered 1.26 -> 1.24"]
    build = "# doubleit\n./double_it.go:9:5: wg.Go undefined (type sync.WaitGroup has no field or method Go)\n"
    assert newer_compiler(build, VERSIONS, lowered) == (
        "needs go >= 1.26: the example and its tests do not build with go.mod lowered to 1.24 (wg.Go undefined (type "
        "sync.WaitGroup has no field or method Go) at ./double_it.go:9)")
    assert newer_compiler(build, VERSIONS) is None  # nothing lowered: a build error is the code's own
    within = "./x.go:5:2: for range over int requires go1.22 or later (-lang was set to go1.21; check go.mod)"
    assert newer_compiler(within, VERSIONS) is None  # the image's Go has it: the module's own directive is wrong
    assert newer_compiler("--- FAIL: TestDouble\n    double_it_test.go:8: Double(1) = 3, want 2", VERSIONS,
                          lowered) is None
    assert newer_compiler("thread 'empty' panicked at tests/count_vowels.rs:5", VERSIONS) is None
    exercises = discover(today)
    assert manifest_needs(_one(exercises, "rust/count-newer").path, VERSIONS) == (
        "needs rustc >= 1.99 (Cargo.toml rust-version; the image has rustc 1.85)")
    assert manifest_needs(_one(exercises, "rust/count-vowels").path, VERSIONS) is None


@pytest.mark.docker
def test_today_s_tracks_lowered_and_newer_compilers_listed_apart_under_both_protocols(today, tmp_path,
                                                                                      language_image):
    out = io.StringIO()
    summary = run_bench(Console(file=out, width=220), today, reply="example", root=tmp_path / "bench",
                        protocol="both")
    rows = {(r["protocol"], r["exercise"]): r for r in summary["exercises"]}
    assert sorted(rows) == [("aider", "double-it"), ("codeduet", "double-it")]  # the only one counted
    for row in rows.values():
        assert row["passed_1"] and row["adapted"] == ["go.mod directive lowered 1.26 -> 1.24"], row
    too_old = {s["exercise"]: s for s in summary["newer_compiler"]}
    assert sorted(too_old) == ["count-newer", "count-vowels", "double-wait"]
    assert too_old["count-newer"]["found"] == "manifest"
    assert too_old["count-vowels"]["reason"].startswith("needs a rustc newer than 1.85: use of unstable library "
                                                        "feature `unsigned_is_multiple_of` (`is_multiple_of` at")
    assert too_old["double-wait"]["reason"].startswith("needs go >= 1.26: the example and its tests do not build "
                                                       "with go.mod lowered to 1.24 (")
    assert "wg.Go undefined" in too_old["double-wait"]["reason"], too_old["double-wait"]
    for proto in ("aider", "codeduet"):
        go, rust = (summary["protocols"][proto]["languages"][lang] for lang in ("go", "rust"))
        assert (go["run"], go["passed_1"], go["rate_1"], go["newer_compiler"], go["lowered"]) == (1, 1, 100.0, 1, 1)
        assert (rust["run"], rust["rate_1"], rust["newer_compiler"], rust["skipped"]) == (0, None, 2, 0)
    assert summary["total"] == summary["protocols"]["aider"]["total"]
    assert summary["meta"]["compilers"] == VERSIONS and summary["meta"]["protocols"] == ["aider", "codeduet"]
    text = out.getvalue()
    assert "aider's two tries" in text and "codeduet's loop" in text and "newer compiler" in text
    assert "skipped rust/count-vowels, needs a newer compiler: needs a rustc newer than 1.85" in text
    lines = (tmp_path / "bench" / "results.jsonl").read_text().splitlines()
    assert len(lines) == 4  # double-it twice, then double-wait and count-vowels once each: not run again


@pytest.mark.docker
def test_before_the_model_or_the_stubs_the_example_is_run_to_find_a_newer_compiler(today, tmp_path, language_image):
    summary = run_bench(QUIET, today, languages=["rust"], reply="stub", root=tmp_path / "bench")
    assert summary["exercises"] == [] and summary["total"]["run"] == 0
    found = {s["exercise"]: s["found"] for s in summary["newer_compiler"]}
    assert found == {"count-newer": "manifest", "count-vowels": "example run"}
    assert list((tmp_path / "bench" / "example-probe" / "runs" / "aider").iterdir())  # the example's own run
