"""Summaries of failed C, C++, Go, Rust and JavaScript builds and runs (agents/feedback/compiler_output.py), checked on
real
outputs: tests/data/compiler_output/NAME.txt is what the command in its README.md printed for src/NAME/ (regenerate
them with its generate.sh)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agents.feedback.compiler_output import first_error_line, is_user_file, signal_name, summarize

DATA = Path(__file__).resolve().parent / "data" / "compiler_output"
FIXTURES = sorted(p.stem for p in DATA.glob("*.txt"))
NO_ERROR = {"gcc_warning_only", "c_segfault_plain"}  # a build with warnings only; a crash that printed nothing


def output(name: str) -> str:
    """The captured stdout+stderr of one fixture."""
    return (DATA / f"{name}.txt").read_text()


def exit_code(name: str) -> int:
    """The exit code README.md records for a fixture."""
    row = next(s for s in (DATA / "README.md").read_text().splitlines() if s.startswith(f"| {name}.txt |"))
    return int(row.rsplit("|", 2)[1])


def summary(name: str, limit: int = 3) -> list[str]:
    """The summary of a fixture, as lines (it must have one)."""
    text = summarize(output(name), limit)
    assert text is not None, name
    return text.splitlines()


def test_every_fixture_has_its_program_and_command() -> None:
    """Each captured output has its source folder and a README row with the command and its exit code."""
    assert len(FIXTURES) >= 40
    for name in FIXTURES:
        assert (DATA / "src" / name).is_dir(), name
        assert exit_code(name) >= 0


@pytest.mark.parametrize("name", [n for n in FIXTURES if n not in NO_ERROR])
def test_summary_is_shorter_and_invents_nothing(name: str) -> None:
    """Every word of the summary is in the output (but the `(N more errors)` count); so is every word of the one-line
    form, but its `at`/`in` and the parentheses around a location."""
    text = output(name)
    lines = summary(name)
    assert len(lines) <= len(text.splitlines())
    words = set(re.findall(r"\S+", text))
    for line in lines:
        if re.fullmatch(r"\(\d+ more (errors?|leaks)\)", line):
            continue
        for word in line.split():
            assert word in words or any(word in w for w in words), (name, line, word)
    first = first_error_line(text)
    assert first and "\n" not in first
    added = {"at", "in"}
    assert all(w in added or any(w.strip("()") in x for x in words) for w in first.split()), first


@pytest.mark.parametrize("name", sorted(NO_ERROR))
def test_nothing_to_summarize(name: str) -> None:
    """Warnings alone, or a crash with no report, give None: the caller keeps the output as it is."""
    assert summarize(output(name)) is None
    assert first_error_line(output(name)) is None


def test_plain_text_is_not_an_error() -> None:
    """Ordinary output is no failure."""
    for text in ("", "hello\nworld\n", "total: 3\n| a | b |\n"):
        assert summarize(text) is None and first_error_line(text) is None


@pytest.mark.parametrize("code, name", [
    (139, "segmentation fault (SIGSEGV)"), (-11, "segmentation fault (SIGSEGV)"), (134, "aborted (SIGABRT)"),
    (-6, "aborted (SIGABRT)"), (136, "floating-point exception (SIGFPE)"), (135, "bus error (SIGBUS)"),
    (132, "illegal instruction (SIGILL)"), (137, "killed (SIGKILL)"), (143, "terminated (SIGTERM)"),
    (0, None), (1, None), (2, None), (101, None), (127, None), (128, None), (255, None),
])
def test_signal_name(code: int, name: str | None) -> None:
    """128+N (or -N) is death by signal N; other codes are the program's own."""
    assert signal_name(code) == name


def test_signal_name_of_real_crashes() -> None:
    """The exit codes a plain segfault and an uncaught C++ exception really had."""
    assert signal_name(exit_code("c_segfault_plain")) == "segmentation fault (SIGSEGV)"
    assert signal_name(exit_code("gpp_uncaught_exception")) == "aborted (SIGABRT)"
    assert signal_name(exit_code("asan_heap_overflow")) is None  # ASan exits 1


@pytest.mark.parametrize("path, mine", [
    ("main.c", True), ("src/main.rs", True), ("./main.go", True), ("/workspace/main.c", True),
    ("/workspace/app/src/main.rs", True), ("/usr/include/c++/12/bits/stl_vector.h", False),
    ("/usr/lib/go-1.19/src/regexp/regexp.go", False), ("/rustc/5980/library/core/src/option.rs", False),
    ("node:internal/modules/cjs/loader", False), ("/root/.cargo/registry/src/x/lib.rs", False),
    ("~/.cargo/registry/src/x/lib.rs", False), ("../sysdeps/nptl/libc_start_call_main.h", False),
    ("../../../../src/libsanitizer/asan/asan_malloc_linux.cpp", False), ("/workspace/node_modules/x/i.js", False),
])
def test_user_files(path: str, mine: bool) -> None:
    """Relative and /workspace paths are the user's; toolchains' and libraries' are not."""
    assert is_user_file(path) is mine


def test_gcc_undeclared() -> None:
    """The error with its source line and caret; its note, the function context and the warnings go."""
    lines = summary("gcc_undeclared")
    assert lines == ["main.c:7:12: error: ‘total’ undeclared (first use in this function)",
                     "    7 |     return total;", "      |            ^~~~~"]
    assert first_error_line(output("gcc_undeclared")) == lines[0]


def test_gcc_many_errors_are_cut_to_the_limit() -> None:
    """The first `limit` errors, then how many more; warnings dropped."""
    text = "\n".join(summary("gcc_many_errors"))
    assert [s for s in text.splitlines() if ": error: " in s] == [
        "main.c:8:21: error: ‘struct point’ has no member named ‘z’",
        "main.c:10:5: error: expected ‘,’ or ‘;’ before ‘char’",
        "main.c:12:11: error: ‘count’ undeclared (first use in this function)"]
    assert text.endswith("(2 more errors)") and "warning" not in text and "note:" not in text
    assert summary("gcc_many_errors", limit=1)[-1] == "(4 more errors)"
    everything = "\n".join(summary("gcc_many_errors", limit=5))
    assert "main.c:14:12: error: ‘q’ undeclared" in everything and "more error" not in everything


def test_gcc_missing_header() -> None:
    """A fatal error is an error; `compilation terminated.` goes."""
    assert summary("gcc_missing_header") == ["main.c:2:10: fatal error: util.h: No such file or directory",
                                             '    2 | #include "util.h"', "      |          ^~~~~~~~"]


def test_linker_errors() -> None:
    """Undefined reference and multiple definition, named by file and line, without the temporary objects."""
    assert summary("gcc_undefined_reference") == ["in function `main':", "main.c:6: undefined reference to `helper'",
                                                  "collect2: error: ld returned 1 exit status"]
    assert first_error_line(output("gcc_undefined_reference")) == "main.c:6: undefined reference to `helper'"
    lines = summary("gcc_multiple_definition")
    assert lines == ["util.c:1: multiple definition of `counter'; main.c:3: first defined here",
                     "collect2: error: ld returned 1 exit status"]


def test_gpp_template_error_is_short() -> None:
    """300 lines of candidates become the error, its source and caret; every note goes."""
    assert len(output("gpp_cout_vector").splitlines()) > 300
    lines = summary("gpp_cout_vector")
    assert len(lines) < 15
    assert lines[0].startswith("main.cpp:6:15: error: no match for ‘operator<<’")
    assert "    6 |     std::cout << v << std::endl;" in lines
    assert not [s for s in lines if "note:" in s or "candidate" in s]


def test_gpp_error_in_a_library_header_names_the_users_line() -> None:
    """An error inside <algorithm> comes with the user's `required from here`; the instantiation chain goes."""
    lines = summary("gpp_sort_list")
    assert lines[0] == "main.cpp:7:14:   required from here"
    assert "error: no match for ‘operator-’" in lines[1]
    assert not [s for s in lines if "In instantiation" in s or "In file included" in s or "note:" in s]
    assert first_error_line(output("gpp_sort_list")).startswith("main.cpp:7:14: error: no match for ‘operator-’")


def test_gpp_uncaught_exception() -> None:
    """`terminate called ...` and its `what():` after the program's output."""
    assert summary("gpp_uncaught_exception") == output("gpp_uncaught_exception").splitlines()


def test_asan_heap_buffer_overflow() -> None:
    """The last 10 lines of output, then the error, the access, the user's frames, the region and the SUMMARY."""
    lines = summary("asan_heap_overflow")
    assert lines[:10] == [f"a[{i}] = {i * i}" for i in range(2, 12)]
    assert lines[10:] == [
        "ERROR: AddressSanitizer: heap-buffer-overflow on address 0x604000000040",
        "WRITE of size 4 at 0x604000000040 thread T0", "    main.c:6 in fill", "    main.c:15 in main",
        "0x604000000040 is located 0 bytes to the right of 48-byte region [0x604000000010,0x604000000040)",
        "allocated by thread T0 here:", "    main.c:14 in main",
        "SUMMARY: AddressSanitizer: heap-buffer-overflow /workspace/main.c:6 in fill"]
    assert first_error_line(output("asan_heap_overflow")) == (
        "AddressSanitizer: heap-buffer-overflow at main.c:6 in fill")


def test_asan_use_after_free() -> None:
    """Where it was used, freed and allocated, in the user's files only; the compiler's warning goes."""
    lines = summary("asan_use_after_free")
    text = "\n".join(lines)
    for part in ("heap-use-after-free", "    main.c:14 in main", "freed by thread T0 here:\n    main.c:13 in main",
                 "previously allocated by thread T0 here:\n    main.c:6 in make_name\n    main.c:12 in main"):
        assert part in text
    frames = "\n".join(s for s in lines if not s.startswith("SUMMARY"))
    assert "interceptor" not in frames and "Wuse-after-free" not in text and "Shadow" not in text
    assert first_error_line(output("asan_use_after_free")) == (
        "AddressSanitizer: heap-use-after-free at main.c:14 in main")


def test_asan_cpp_frames_skip_the_standard_library() -> None:
    """A C++ report keeps main.cpp's frames (function names without their argument lists), not libstdc++'s."""
    text = "\n".join(summary("asan_vector_overflow"))
    assert text.startswith("summing 4 values\nERROR: AddressSanitizer: heap-buffer-overflow")
    assert "    main.cpp:6 in total\n    main.cpp:13 in main" in text and "    main.cpp:11 in main" in text
    assert "/usr/include" not in text.replace("SUMMARY", "") and "std::allocator<int>::allocate" not in text


def test_asan_stack_overflow_repeats_once() -> None:
    """250 frames of the same recursion become its two lines."""
    lines = summary("asan_stack_overflow")
    assert lines == ["recursing", "ERROR: AddressSanitizer: stack-overflow on address "
                     + output("asan_stack_overflow").split("stack-overflow on address ")[1].split()[0],
                     "    main.c:3 in depth", "    main.c:6 in depth",
                     "SUMMARY: AddressSanitizer: stack-overflow /workspace/main.c:3 in depth"]


def test_asan_segv_keeps_the_hint() -> None:
    """A wild read keeps what kind of access it was and the zero-page hint."""
    assert summary("asan_wild_pointer") == [
        "reading", "ERROR: AddressSanitizer: SEGV on unknown address 0x000000000010",
        "The signal is caused by a READ memory access.", "Hint: address points to the zero page.",
        "    main.c:12 in main", "SUMMARY: AddressSanitizer: SEGV /workspace/main.c:12 in main"]
    assert first_error_line(output("asan_wild_pointer")) == (
        "AddressSanitizer: SEGV on unknown address 0x000000000010 at main.c:12 in main")


def test_leak_sanitizer() -> None:
    """A leak: its size, where it was allocated in the user's files, the SUMMARY."""
    assert summary("lsan_leak") == [
        "ERROR: LeakSanitizer: detected memory leaks", "Direct leak of 40 byte(s) in 1 object(s) allocated from:",
        "    main.c:5 in make", "    main.c:11 in main",
        "SUMMARY: AddressSanitizer: 40 byte(s) leaked in 1 allocation(s)."]
    assert first_error_line(output("lsan_leak")) == "LeakSanitizer: detected memory leaks at main.c:5 in make"


@pytest.mark.parametrize("name", ["ubsan_overflow", "ubsan_bounds", "ubsan_null_member"])
def test_ubsan(name: str) -> None:
    """An UndefinedBehaviorSanitizer line is kept whole, after the program's output."""
    text = output(name)
    assert summary(name) == text.splitlines()
    assert first_error_line(text) == text.splitlines()[-1] and ": runtime error: " in text.splitlines()[-1]


def test_go_build_errors() -> None:
    """`go run` errors without the package header, cut to the limit, their detail lines kept."""
    lines = summary("go_undefined")
    assert lines == ['./main.go:5:2: imported and not used: "os"', "./main.go:9:2: total declared but not used",
                     "./main.go:11:3: undefined: count", "(1 more error)"]
    assert first_error_line(output("go_undefined")) == lines[0]
    lines = summary("go_type_errors")
    assert "./main.go:10:15: too many arguments in call to half" in lines
    assert "\thave (number, number)" in lines and lines[-1] == "(2 more errors)"
    assert summary("go_vet") == ["./main.go:7:2: fmt.Printf format %d has arg name of wrong type string"]


def test_go_panic() -> None:
    """The output, the panic and the user's frames; goroutine headers, offsets and `exit status` go."""
    assert summary("go_panic_index") == [
        "pick 0 10", "pick 1 20", "pick 2 30", "panic: runtime error: index out of range [3] with length 3",
        "    main.go:6 in main.pick", "    main.go:12 in main.main"]
    assert first_error_line(output("go_panic_index")) == "panic: runtime error: index out of range [3] with length 3"
    assert summary("go_nil_pointer")[1:3] == [
        "panic: runtime error: invalid memory address or nil pointer dereference",
        "[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x481078]"]
    assert summary("go_nil_map")[-2:] == ["    main.go:8 in main.count", "    main.go:15 in main.main"]
    assert summary("go_deadlock") == ["waiting", "fatal error: all goroutines are asleep - deadlock!",
                                      "    main.go:8 in main.main"]


def test_go_panic_in_the_standard_library_shows_the_users_frame() -> None:
    """A panic raised inside regexp shows where the user called it, not /usr/lib/go."""
    lines = summary("go_regexp_panic")
    assert lines == ["compiling", "panic: regexp: Compile(`(ab`): error parsing regexp: missing closing ): `(ab`",
                     "    main.go:10 in main.main"]


def test_rustc_error() -> None:
    """The error, its location and marked source; `aborting due to` and `--explain` go."""
    assert summary("rustc_e0425") == ["error[E0425]: cannot find value `total` in this scope", " --> main.rs:7:5",
                                      "7 |     total", "  |     ^^^^^ not found in this scope"]
    assert first_error_line(output("rustc_e0425")) == (
        "error[E0425]: cannot find value `total` in this scope (main.rs:7:5)")
    assert first_error_line(output("rustc_syntax")) == "error: expected `;`, found keyword `for` (main.rs:2:27)"


def test_rustc_keeps_help_and_drops_notes() -> None:
    """A help with its suggested code stays; a note goes."""
    text = "\n".join(summary("rustc_borrow"))
    assert "help: consider cloning the value if the performance cost is acceptable" in text
    assert "7 |     let n = consume(v.clone());" in text
    assert "8 |     println!(\"{} {}\", n, v.len());" in text and "value borrowed here after move" in text
    assert "note:" not in text and "aborting" not in text


def test_rustc_many_errors_are_cut_to_the_limit() -> None:
    """Five errors: the first three, then the count."""
    lines = summary("rustc_many_errors")
    assert [s for s in lines if s.startswith("error")] == [
        "error[E0308]: mismatched types", "error[E0308]: mismatched types",
        "error[E0061]: this function takes 1 argument but 2 arguments were supplied"]
    assert lines[-1] == "(2 more errors)" and "help: remove the extra argument" in lines


def test_cargo_error() -> None:
    """cargo's progress lines, the warning, std's trait list and `could not compile` go; the error and help stay."""
    lines = summary("cargo_mismatched")
    assert lines[:4] == ["error[E0277]: cannot divide `f64` by `usize`", " --> src/main.rs:3:11",
                         "3 |     total / xs.len()", "  |           ^ no implementation for `f64 / usize`"]
    assert "  = help: the trait `Div<usize>` is not implemented for `f64`" in lines
    text = "\n".join(lines)
    assert "Compiling" not in text and "unused" not in text and "/rustc/" not in text and "could not" not in text


def test_rust_panic() -> None:
    """The output, then the panic and its message; the RUST_BACKTRACE hint goes."""
    assert summary("rust_panic_index") == ["pick 0 = 10", "pick 1 = 20", "pick 2 = 30",
                                           output("rust_panic_index").splitlines()[4],
                                           "index out of bounds: the len is 3 but the index is 3"]
    assert first_error_line(output("rust_panic_index")) == (
        "index out of bounds: the len is 3 but the index is 3 (main.rs:2:5)")
    lines = summary("cargo_run_panic")
    assert lines[0] == "42" and lines[-1] == "not a number: ParseIntError { kind: InvalidDigit }"


def test_rust_backtrace_keeps_the_users_frames() -> None:
    """RUST_BACKTRACE=1: main.rs's frames, not std's."""
    lines = summary("rust_panic_backtrace")
    assert lines[-3:] == ["called `Option::unwrap()` on a `None` value", "    main.rs:4:17 in main::lookup",
                          "    main.rs:11:24 in main::main"]
    assert not [s for s in lines if "/rustc/" in s or "core::" in s]


def test_rust_stack_overflow() -> None:
    """The program's output and the overflow; the recursion warning goes."""
    assert summary("rust_stack_overflow")[-3:] == ["recursing", output("rust_stack_overflow").splitlines()[-2],
                                                   "fatal runtime error: stack overflow, aborting"]


def test_node_uncaught_exception() -> None:
    """The output, the location, source line and caret, the error and the user's frames; node:internal goes."""
    assert summary("node_typeerror") == [
        "hello Ada", "/workspace/main.js:4", '  return "hello " + user.name.first;',
        "                              ^", "TypeError: Cannot read properties of undefined (reading 'first')",
        "    at greet (/workspace/main.js:4:31)", "    at Object.<anonymous> (/workspace/main.js:8:15)"]
    assert first_error_line(output("node_typeerror")) == (
        "TypeError: Cannot read properties of undefined (reading 'first')")


def test_node_syntax_error() -> None:
    """A SyntaxError: where, the line and caret, the message; no internal frames."""
    assert summary("node_syntaxerror") == ["/workspace/main.js:5", "console.log(add(1, 2);",
                                           "                    ^", "SyntaxError: missing ) after argument list"]


def test_node_error_thrown_inside_node() -> None:
    """A module not found: node's own source line and properties go, the user's require stays."""
    assert summary("node_module_not_found") == ["Error: Cannot find module 'lodash'", "Require stack:",
                                                "- /workspace/main.js",
                                                "    at Object.<anonymous> (/workspace/main.js:1:11)"]
    lines = summary("node_json")
    assert lines[:4] == ["parsing", "<anonymous_script>:1", '{"a": 1,}', "        ^"]
    assert lines[-1] == "    at Object.<anonymous> (/workspace/main.js:3:19)"


@pytest.mark.parametrize("name, error", [
    ("node_throw", "Error: not a number: forty"), ("node_async_rejection", "RangeError: no record 2"),
    ("node_referenceerror", "ReferenceError: totl is not defined"), ("node_throw_string", "negative input"),
])
def test_node_errors(name: str, error: str) -> None:
    """Thrown errors, rejected promises, ES modules, thrown strings: the error line names it."""
    assert first_error_line(output(name)) == error
    lines = summary(name)
    assert error in lines and not [s for s in lines if "node:internal" in s or s.startswith(("Node.js", "(Use"))]
