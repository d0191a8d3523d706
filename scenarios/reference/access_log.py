import re
from collections import Counter

LINE = re.compile(r'^(\S+) \S+ \S+ \[[^\]]*\] "[^"]*" (\d{3}) \S+')

status = Counter()
not_found = Counter()
with open("access.log") as f:
    for line in f:
        m = LINE.match(line)
        if not m:
            continue
        ip, code = m.group(1), int(m.group(2))
        status[code] += 1
        if code == 404:
            not_found[ip] += 1

for code in sorted(status):
    print(f"{code}: {status[code]}")
ip, count = not_found.most_common(1)[0]
print(f"Most 404s: {ip} with {count}")
