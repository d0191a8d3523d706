import csv
import io
import os
import tempfile

import pytest

os.environ["ORDERS_DB"] = os.path.join(tempfile.mkdtemp(), "hidden-orders.db")

from app import app  # noqa: E402  (ORDERS_DB first)

client = app.test_client()
HEADER = ["id", "customer", "amount", "status"]


def rows(query=""):
    answer = client.get("/orders/export.csv" + query)
    assert answer.status_code == 200
    return list(csv.reader(io.StringIO(answer.get_data(as_text=True))))


def test_1_no_orders_exports_only_the_header():
    assert rows() == [HEADER]


def test_2_orders_are_exported_in_id_order_with_two_decimals_and_csv_quoting():
    for customer, amount, status in [("Ada", 12.5, "paid"), ("Smith, John", 3, "pending"),
                                     ('The "Best" Shop', 7.1, "paid"), ("Zoë", 0.25, "refunded")]:
        answer = client.post("/orders", json={"customer": customer, "amount": amount, "status": status})
        assert answer.status_code == 201
    assert rows() == [HEADER, ["1", "Ada", "12.50", "paid"], ["2", "Smith, John", "3.00", "pending"],
                      ["3", 'The "Best" Shop', "7.10", "paid"], ["4", "Zoë", "0.25", "refunded"]]
    text = client.get("/orders/export.csv").get_data(as_text=True)
    assert '"Smith, John"' in text and '"The ""Best"" Shop"' in text


def test_3_the_status_filter_keeps_only_that_status():
    assert rows("?status=paid") == [HEADER, ["1", "Ada", "12.50", "paid"], ["3", 'The "Best" Shop', "7.10", "paid"]]
    assert rows("?status=refunded") == [HEADER, ["4", "Zoë", "0.25", "refunded"]]


def test_4_the_download_headers():
    answer = client.get("/orders/export.csv")
    assert answer.headers["Content-Type"].startswith("text/csv")
    assert answer.headers["Content-Disposition"] == 'attachment; filename="orders.csv"'


def test_5_an_unknown_status_is_400_json():
    answer = client.get("/orders/export.csv?status=lost")
    assert answer.status_code == 400
    assert "error" in answer.get_json()


@pytest.mark.parametrize("body", [
    {"customer": "", "amount": 5, "status": "paid"}, {"amount": 5, "status": "paid"},
    {"customer": "Eve", "amount": 0, "status": "paid"}, {"customer": "Eve", "amount": "5", "status": "paid"},
    {"customer": "Eve", "amount": 5, "status": "shipped"}, {"customer": "Eve", "amount": 5},
])
def test_6_invalid_orders_are_400_and_not_stored(body):
    answer = client.post("/orders", json=body)
    assert answer.status_code == 400
    assert "error" in answer.get_json()
    assert len(rows()) == 5
