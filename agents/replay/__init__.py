"""Saved runs, read back: show in the terminal, re-execute with a divergence report, export to HTML, resume."""
