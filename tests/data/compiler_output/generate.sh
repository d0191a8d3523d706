#!/bin/sh
# Regenerates the fixtures of tests/test_compiler_output.py: each src/NAME/ is copied to /workspace (a private mount
# namespace and chroot, so the paths are the sandbox's), the command below runs there as the sandbox runs a block
# (agents/sandbox/languages.py), and its stdout+stderr is saved as NAME.txt; README.md gets the table of commands and exit
# codes. Needs root, gcc/g++ 12, go, rustc/cargo, node. Usage: sh tests/data/compiler_output/generate.sh
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
if [ "${1:-}" != inner ]; then
    R=$(mktemp -d /tmp/cdxroot.XXXXXX)
    unshare -m sh -c '
        set -e; R=$1; mount -t tmpfs none "$R"
        for d in /*; do if [ -d "$d" ] && [ ! -L "$d" ]; then mkdir -p "$R$d"; mount --rbind "$d" "$R$d"; fi; done
        for l in /*; do if [ -L "$l" ]; then cp -P "$l" "$R/"; fi; done
        mount -t tmpfs none "$R/tmp"; mkdir -p "$R/workspace"
        exec chroot "$R" sh "$0/generate.sh" inner' "$HERE" "$R"
    rmdir "$R"; exit
fi
BIN=/tmp/codeduet-bin
SAN="-g -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
C="mkdir -p $BIN && cc -std=gnu17 -Wall $SAN -o $BIN/main main.c -lm && exec $BIN/main"
CPP="mkdir -p $BIN && c++ -std=c++20 -Wall $SAN -o $BIN/main main.cpp -lm && exec $BIN/main"
RS="mkdir -p $BIN && rustc --edition 2021 -g -o $BIN/main main.rs && exec $BIN/main"
README="$HERE/README.md"
cat > "$README" <<'HEAD'
# Real toolchain outputs

Each `NAME.txt` is the combined stdout+stderr of the command below, run in `/workspace` holding `src/NAME/`
(Debian 12: gcc/g++ 12.2, go 1.19, rustc/cargo 1.95, node 20). Regenerate them all with `sh generate.sh` (root).

| fixture | command | exit code |
|---|---|---|
HEAD
run() {  # run NAME COMMAND
    rm -rf /workspace/* "$BIN"; cp -r "$HERE/src/$1/." /workspace/
    code=0; (cd /workspace && env -i HOME=/root LANG=C.UTF-8 PATH=/root/.cargo/bin:/usr/bin:/bin sh -c "$2") > "$HERE/$1.txt" 2>&1 || code=$?
    printf '| %s.txt | `%s` | %s |\n' "$1" "$2" "$code" >> "$README"
}
run gcc_undeclared "$C"
run gcc_many_errors "$C"
run gcc_undefined_reference "$C"
run gcc_missing_header "$C"
run gcc_warning_only "$C"
run gcc_multiple_definition "mkdir -p $BIN && cc -std=gnu17 -Wall $SAN -o $BIN/main main.c util.c -lm && exec $BIN/main"
run gpp_cout_vector "$CPP"
run gpp_sort_list "$CPP"
run gpp_uncaught_exception "$CPP"
run c_segfault_plain "mkdir -p $BIN && cc -std=gnu17 -Wall -g -o $BIN/main main.c && exec $BIN/main"
run asan_heap_overflow "$C"
run asan_use_after_free "$C"
run asan_stack_overflow "$C"
run asan_wild_pointer "$C"
run ubsan_null_member "$C"
run asan_vector_overflow "$CPP"
run ubsan_overflow "$C"
run ubsan_bounds "$C"
run lsan_leak "$C"
run go_undefined "exec go run main.go"
run go_type_errors "exec go run main.go"
run go_vet "go vet main.go"
run go_panic_index "exec go run main.go"
run go_nil_pointer "exec go run main.go"
run go_nil_map "exec go run main.go"
run go_regexp_panic "exec go run main.go"
run go_deadlock "exec go run main.go"
run rustc_e0425 "$RS"
run rustc_borrow "$RS"
run rustc_many_errors "$RS"
run rustc_syntax "$RS"
run rust_panic_index "$RS"
run rust_panic_backtrace "mkdir -p $BIN && rustc --edition 2021 -g -o $BIN/main main.rs && RUST_BACKTRACE=1 exec $BIN/main"
run rust_stack_overflow "$RS"
run cargo_mismatched "cd app && cargo run --offline"
run cargo_run_panic "cd app && cargo run --offline"
run node_typeerror "exec node main.js"
run node_syntaxerror "exec node main.js"
run node_throw "exec node main.js"
run node_throw_string "exec node main.js"
run node_json "exec node main.js"
run node_module_not_found "exec node main.js"
run node_async_rejection "exec node main.js"
run node_referenceerror "exec node main.mjs"
