"""Reference solution (for checking the hidden tests, never shown to the loop)."""

class InsufficientFunds(Exception):
    pass


class Account:
    def __init__(self, owner, balance=0):
        self.owner, self.balance = owner, balance

    def deposit(self, amount):
        if amount <= 0:
            raise ValueError(amount)
        self.balance += amount

    def withdraw(self, amount):
        if amount <= 0:
            raise ValueError(amount)
        if amount > self.balance:
            raise InsufficientFunds(amount)
        self.balance -= amount
