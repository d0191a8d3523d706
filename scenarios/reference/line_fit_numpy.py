import numpy as np

x = np.arange(10, dtype=float)
y = np.array([-0.9, 0.8, 4.0, 6.7, 8.5, 11.4, 13.6, 16.8, 18.4, 21.4])
slope, intercept = np.polyfit(x, y, 1)
pred = slope * x + intercept
r2 = 1 - np.sum((y - pred) ** 2) / np.sum((y - y.mean()) ** 2)
print(f"slope: {slope:.3f}")
print(f"intercept: {intercept:.3f}")
print(f"R^2: {r2:.4f}")
print(f"y(12): {slope * 12 + intercept:.2f}")
