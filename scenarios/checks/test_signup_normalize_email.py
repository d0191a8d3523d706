"""Acceptance check for signup_normalize_email.yaml: validators.normalize_email and the new register() behave as
the task states."""

import pytest

from signup import register
from validators import is_valid_email, normalize_email


def test_normalize_email():
    assert normalize_email("  Bob@Example.COM ") == "bob@example.com"
    assert normalize_email("alice@example.org") == "alice@example.org"
    assert normalize_email("   Carol.Lee@Mail.Example.net  ") == "carol.lee@mail.example.net"


def test_is_valid_email_unchanged():
    assert is_valid_email("bob@example.com")
    assert not is_valid_email("bob@example")
    assert not is_valid_email(" bob@example.com")


def test_register_stores_and_returns_the_normalized_address():
    users = {}
    assert register(users, "  Bob@Example.com ", "Bob") == "bob@example.com"
    assert users == {"bob@example.com": "Bob"}


def test_duplicate_in_another_case_is_rejected():
    users = {}
    register(users, "Bob@Example.com", "Bob")
    with pytest.raises(ValueError):
        register(users, " bob@example.com ", "Robert")
    assert users == {"bob@example.com": "Bob"}


def test_different_addresses_are_both_kept():
    users = {}
    register(users, "ann@example.com", "Ann")
    register(users, "ANNA@example.com", "Anna")
    assert users == {"ann@example.com": "Ann", "anna@example.com": "Anna"}


@pytest.mark.parametrize("email", ["not-an-email", "bob@example", "   ", ""])
def test_invalid_addresses_still_raise(email):
    users = {}
    with pytest.raises(ValueError):
        register(users, email, "X")
    assert users == {}
