import csv
from collections import deque

lots = deque()  # [quantity, unit_cost], oldest first
cogs = revenue = 0.0
with open("stock_moves.csv", newline="") as f:
    for row in csv.DictReader(f):
        qty, price = int(row["quantity"]), float(row["unit_price"])
        if row["type"] == "buy":
            lots.append([qty, price])
            continue
        revenue += qty * price
        while qty > 0:
            take = min(qty, lots[0][0])
            cogs += take * lots[0][1]
            lots[0][0] -= take
            qty -= take
            if lots[0][0] == 0:
                lots.popleft()

units_left = sum(q for q, _ in lots)
stock_value = sum(q * c for q, c in lots)
print(f"COGS: {cogs:.2f}")
print(f"Revenue: {revenue:.2f}")
print(f"Gross profit: {revenue - cogs:.2f}")
print(f"Units left: {units_left}")
print(f"Stock value: {stock_value:.2f}")
