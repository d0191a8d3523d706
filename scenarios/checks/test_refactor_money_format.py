"""Acceptance check for refactor_money_format.yaml: the original tests (copied here) still pass, money.format_cents
behaves as stated, and report.py now uses it instead of its own copy of the formatting."""

import ast
from pathlib import Path

from money import format_cents
from report import sales_report


# the workspace's test_report.py, verbatim
def test_totals_per_customer_sorted_by_name():
    orders = [("bob", 1250), ("alice", 99), ("bob", 250)]
    assert sales_report(orders) == ["alice: 0.99", "bob: 15.00", "TOTAL: 15.99"]


def test_thousands_separator():
    assert sales_report([("acme", 123456789)]) == ["acme: 1,234,567.89", "TOTAL: 1,234,567.89"]


def test_refund_makes_a_negative_total():
    assert sales_report([("zed", 500), ("zed", -1730)]) == ["zed: -12.30", "TOTAL: -12.30"]


def test_no_orders():
    assert sales_report([]) == ["TOTAL: 0.00"]


# stated in the task
def test_format_cents():
    assert format_cents(123456) == "1,234.56"
    assert format_cents(-1230) == "-12.30"
    assert format_cents(5) == "0.05"
    assert format_cents(0) == "0.00"
    assert format_cents(-5) == "-0.05"
    assert format_cents(100000000) == "1,000,000.00"


def test_report_imports_format_cents_from_money():
    tree = ast.parse(Path("report.py").read_text())
    imports = [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]
    ok = any(isinstance(n, ast.ImportFrom) and n.module == "money" and any(a.name in ("format_cents", "*")
                                                                              for a in n.names) for n in imports) \
        or any(isinstance(n, ast.Import) and any(a.name == "money" for a in n.names) for n in imports)
    assert ok, "report.py must import format_cents from the money module"
    assert "format_cents" in Path("report.py").read_text(), "report.py must call format_cents"


def test_copied_formatting_is_gone_from_report():
    source = Path("report.py").read_text()
    leftovers = [code for code in ("// 100", "% 100", ":02d", ":,}") if code in source]
    assert not leftovers, f"report.py still formats money itself ({', '.join(leftovers)}): use format_cents"
    assert not [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef) and n.name == "format_cents"], \
        "format_cents must live in money.py, not be defined again in report.py"


def test_report_uses_money_at_run_time(monkeypatch):
    import money
    import report
    monkeypatch.setattr(report, "format_cents", lambda cents: f"<{cents}>", raising=False)
    monkeypatch.setattr(money, "format_cents", lambda cents: f"<{cents}>")
    assert report.sales_report([("a", 150)]) == ["a: <150>", "TOTAL: <150>"]
