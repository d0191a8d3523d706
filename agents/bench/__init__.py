"""Benchmarks: HumanEval single pass vs the self-debug loop, executor overhead, LLM throughput."""
