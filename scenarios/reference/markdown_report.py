import csv
from collections import defaultdict
from decimal import Decimal

totals = defaultdict(Decimal)
counts = defaultdict(int)
with open("expenses.csv", newline="") as f:
    for row in csv.DictReader(f):
        totals[row["category"]] += Decimal(row["amount"])
        counts[row["category"]] += 1

lines = ["| Category | Count | Total |", "| :--- | ---: | ---: |"]
for category in sorted(totals, key=lambda c: totals[c], reverse=True):
    lines.append(f"| {category} | {counts[category]} | {totals[category]:,.2f} |")
lines.append(f"| **Total** | {sum(counts.values())} | {sum(totals.values()):,.2f} |")

table = "\n".join(lines)
with open("report.md", "w") as f:
    f.write(table + "\n")
print(table)
