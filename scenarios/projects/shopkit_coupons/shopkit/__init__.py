"""shopkit: the checkout logic of our web shop. Every amount of money is a whole number of cents (int)."""
