import matplotlib.pyplot as plt
import pandas as pd

orders = pd.read_csv("orders.csv")
orders["revenue"] = orders["quantity"] * orders["unit_price"]
monthly = orders.groupby(orders["date"].str[:7])["revenue"].sum()
for month, revenue in monthly.items():
    print(f"{month}: {revenue:.2f}")
monthly.plot.bar()
plt.title("Revenue per month")
plt.xlabel("month")
plt.ylabel("revenue")
plt.show()
