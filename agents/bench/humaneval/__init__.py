"""HumanEval pass@1: single pass vs the product's self-debug loop (run.py), scored by the hidden tests only."""
