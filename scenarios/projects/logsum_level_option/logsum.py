"""Summarise an application log: how many lines there are of each level.

usage: python3 logsum.py [LOGFILE]        (LOGFILE defaults to app.log)
"""
import argparse
from collections import Counter


def count_levels(lines):
    """Counter of levels; a line looks like `2024-05-01 10:00:01 INFO message...`."""
    counts = Counter()
    for line in lines:
        parts = line.split()
        if len(parts) >= 3:
            counts[parts[2]] += 1
    return counts


def main(argv=None):
    parser = argparse.ArgumentParser(description="Count the lines of each level in a log file.")
    parser.add_argument("logfile", nargs="?", default="app.log", help="log file (default: app.log)")
    args = parser.parse_args(argv)
    with open(args.logfile) as f:
        counts = count_levels(f)
    for level in sorted(counts):
        print(f"{level} {counts[level]}")


if __name__ == "__main__":
    main()
