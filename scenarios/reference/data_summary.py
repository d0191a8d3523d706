import pandas as pd

orders = pd.read_csv("orders.csv")
orders["revenue"] = orders["quantity"] * orders["unit_price"]
print(f"orders: {len(orders)}")
print(f"revenue: {orders['revenue'].sum():.2f}")
print(f"average: {orders['revenue'].mean():.2f}")
top = orders.groupby("customer")["revenue"].sum().sort_values(ascending=False).head(3)
for customer, revenue in top.items():
    print(f"{customer}: {revenue:.2f}")
