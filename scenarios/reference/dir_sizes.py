from collections import defaultdict
from pathlib import PurePosixPath

sizes = defaultdict(int)
total = 0
with open("files.txt") as f:
    for line in f:
        if not line.strip():
            continue
        size, path = line.split(maxsplit=1)
        size = int(size)
        total += size
        for parent in PurePosixPath(path.strip()).parents:
            if str(parent) != ".":
                sizes[str(parent)] += size

for directory in sorted(sizes):
    print(directory, sizes[directory])
print("total", total)
