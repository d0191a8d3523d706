import numpy as np

states = ["sunny", "cloudy", "rainy"]
P = np.array([[0.7, 0.2, 0.1],
              [0.3, 0.4, 0.3],
              [0.2, 0.4, 0.4]])

today = np.array([1.0, 0.0, 0.0])
in_3_days = today @ np.linalg.matrix_power(P, 3)

# pi (P - I) = 0 with sum(pi) = 1: least squares on the stacked system
A = np.vstack([(P - np.eye(3)).T, np.ones(3)])
b = np.array([0.0, 0.0, 0.0, 1.0])
pi = np.linalg.lstsq(A, b, rcond=None)[0]


def fmt(vector):
    return ", ".join(f"{state} {p:.4f}" for state, p in zip(states, vector))


print(f"in 3 days: {fmt(in_3_days)}")
print(f"long run: {fmt(pi)}")
