"""Monthly sales report for the finance team."""


def sales_report(orders):
    """Lines of the report: one per customer (sorted by name) with their total, then the grand total.

    orders: a list of (customer, amount) pairs, the amount in cents (a refund is negative).
    """
    totals = {}
    for customer, cents in orders:
        totals[customer] = totals.get(customer, 0) + cents
    lines = []
    for customer in sorted(totals):
        cents = totals[customer]
        sign = "-" if cents < 0 else ""
        cents = abs(cents)
        lines.append(f"{customer}: {sign}{cents // 100:,}.{cents % 100:02d}")
    grand = sum(totals.values())
    sign = "-" if grand < 0 else ""
    grand = abs(grand)
    lines.append(f"TOTAL: {sign}{grand // 100:,}.{grand % 100:02d}")
    return lines


if __name__ == "__main__":
    for line in sales_report([("acme", 123456), ("bolt", 9900), ("acme", -2500)]):
        print(line)
