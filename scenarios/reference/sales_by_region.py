import csv
from collections import defaultdict

revenue = defaultdict(float)
with open("sales.csv", newline="") as f:
    for row in csv.DictReader(f):
        revenue[row["region"]] += int(row["units"]) * float(row["unit_price"])

ranked = sorted(revenue.items(), key=lambda kv: kv[1], reverse=True)
with open("region_revenue.csv", "w", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(["region", "revenue"])
    for region, total in ranked:
        print(f"{region}: {total:.2f}")
        writer.writerow([region, f"{total:.2f}"])
