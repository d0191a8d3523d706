import itertools

import main
import pytest
from fastapi.testclient import TestClient

client = TestClient(main.app)
names = (f"user_{n}" for n in itertools.count(1))


def body(**changes):
    return {"username": next(names), "email": "someone@example.com", "age": 30, **changes}


def test_created_user_is_returned_with_an_id_and_can_be_read():
    sent = body()
    answer = client.post("/users", json=sent)
    assert answer.status_code == 201
    user = answer.json()
    assert isinstance(user["id"], int)
    assert {k: user[k] for k in ("username", "email", "age")} == sent
    assert client.get(f"/users/{user['id']}").json() == user


def test_ids_count_up():
    first = client.post("/users", json=body()).json()["id"]
    second = client.post("/users", json=body()).json()["id"]
    assert second == first + 1


@pytest.mark.parametrize("changes", [
    {"username": "ab"}, {"username": "x" * 21}, {"username": "has space"}, {"username": "dash-ed"},
    {"email": "no-at-sign.com"}, {"email": "@example.com"}, {"email": "a@b@c.com"}, {"email": "a@nodot"},
    {"age": 12}, {"age": 121}, {"age": "old"},
])
def test_a_rule_broken_is_422_with_the_validation_detail(changes):
    answer = client.post("/users", json=body(**changes))
    assert answer.status_code == 422, changes
    assert isinstance(answer.json()["detail"], list)


def test_limits_are_accepted():
    assert client.post("/users", json=body(username="abc", age=13)).status_code == 201
    assert client.post("/users", json=body(username="a" * 20, age=120)).status_code == 201


def test_missing_field_is_422():
    sent = body()
    del sent["age"]
    assert client.post("/users", json=sent).status_code == 422


def test_taken_username_ignoring_case_is_409():
    assert client.post("/users", json=body(username="Grace_H")).status_code == 201
    answer = client.post("/users", json=body(username="grace_h"))
    assert answer.status_code == 409
    assert answer.json() == {"detail": "username taken"}


def test_unknown_user_is_404():
    answer = client.get("/users/99999")
    assert answer.status_code == 404
    assert answer.json() == {"detail": "user not found"}
