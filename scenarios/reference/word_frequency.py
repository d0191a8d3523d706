import re
from collections import Counter

with open("article.txt") as f:
    words = re.findall(r"[a-z]+", f.read().lower())
counts = Counter(w for w in words if len(w) >= 4)
for word, count in counts.most_common(5):
    print(word, count)
