"""Cart lines and the cart's subtotal."""
from dataclasses import dataclass


@dataclass
class Line:
    sku: str
    unit_price: int  # cents
    qty: int


def subtotal(lines):
    """Sum of unit_price * qty over the lines, in cents."""
    return sum(line.unit_price * line.qty for line in lines)
