"""The benchmarks a user runs from an installed codeduet (`codeduet bench`, agents/bench/cli.py): HumanEval single
pass against the self-debug loop, aider's polyglot (Exercism) exercises, the sandbox's per-block overhead, the
command line's startup and the model's speed. The scripts a checkout runs (`python -m benchmarks.<name>`) are in
the top-level benchmarks/ folder."""
