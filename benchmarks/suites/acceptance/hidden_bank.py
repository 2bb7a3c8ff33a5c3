"""Hidden acceptance tests for the bank prompt (written from the prompt by hand; never shown to the loop)."""

import pytest
from bank import Account, InsufficientFunds


def test_deposit_example():
    account = Account("bob")
    account.deposit(5)
    assert account.balance == 5


def test_withdraw():
    account = Account("ann", 10)
    account.withdraw(4)
    assert account.balance == 6


def test_overdraw_example():
    with pytest.raises(InsufficientFunds):
        Account("ann", 10).withdraw(15)


def test_overdraw_leaves_balance():
    account = Account("ann", 10)
    with pytest.raises(InsufficientFunds):
        account.withdraw(11)
    assert account.balance == 10


def test_exception_class():
    assert issubclass(InsufficientFunds, Exception)


def test_zero_deposit():
    with pytest.raises(ValueError):
        Account("cy", 1).deposit(0)


def test_negative_deposit():
    with pytest.raises(ValueError):
        Account("cy", 1).deposit(-5)


def test_bad_withdraw():
    with pytest.raises(ValueError):
        Account("cy", 1).withdraw(-1)
