import csv
import json

with open("inventory.csv", newline="") as f:
    rows = list(csv.DictReader(f))

low = []
for r in rows:
    qty, level = int(r["quantity"]), int(r["reorder_level"])
    if qty < level:
        low.append({"sku": r["sku"], "name": r["name"], "quantity": qty, "shortfall": level - qty})
low.sort(key=lambda item: item["shortfall"], reverse=True)

with open("low_stock.json", "w") as f:
    json.dump(low, f, indent=2)
print(f"{len(low)} items need to be reordered")
