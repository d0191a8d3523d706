"""Benchmark scripts run from a checkout (`python -m benchmarks.<name>`): they drive the product through its own
code with a config, never a private copy of the loop. What a user runs from an installed codeduet is `codeduet bench`
(agents/bench/)."""
