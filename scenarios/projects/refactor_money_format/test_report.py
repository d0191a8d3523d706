from report import sales_report


def test_totals_per_customer_sorted_by_name():
    orders = [("bob", 1250), ("alice", 99), ("bob", 250)]
    assert sales_report(orders) == ["alice: 0.99", "bob: 15.00", "TOTAL: 15.99"]


def test_thousands_separator():
    assert sales_report([("acme", 123456789)]) == ["acme: 1,234,567.89", "TOTAL: 1,234,567.89"]


def test_refund_makes_a_negative_total():
    assert sales_report([("zed", 500), ("zed", -1730)]) == ["zed: -12.30", "TOTAL: -12.30"]


def test_no_orders():
    assert sales_report([]) == ["TOTAL: 0.00"]
