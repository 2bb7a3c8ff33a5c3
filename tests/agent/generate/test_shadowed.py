"""A generated class's instance attribute that hides its own method is renamed, and nothing else is."""

from __future__ import annotations

from greenloop.agent.generate.shadowed import unshadow

BANK = '''class BankAccount:
    def __init__(self, balance: float = 0):
        self.balance: float = balance
        self.history = []

    def deposit(self, amount):
        self.balance += amount
        self.history.append(("deposit", amount))

    def balance(self) -> float:
        return self.balance

    def history(self):
        return list(self.history)

    def report(self):
        return f"{self.balance()} after {len(self.history())}"
'''


def test_the_attributes_that_hide_methods_are_renamed_and_the_method_calls_kept() -> None:
    # the 1.5B model's BankAccount: every `account.balance()` failed with "'float' object is not callable"
    fixed = unshadow("bank.py", BANK)
    assert "self._balance: float = balance\n        self._history = []" in fixed
    assert "self._balance += amount\n        self._history.append" in fixed
    assert "return self._balance\n" in fixed and "return list(self._history)" in fixed
    assert 'f"{self.balance()} after {len(self.history())}"' in fixed  # calls are the methods
    assert "def balance(self)" in fixed and "__init__(self, balance: float = 0)" in fixed
    namespace: dict[str, object] = {}
    exec(compile(fixed, "bank.py", "exec"), namespace)  # the fixed class works
    account = namespace["BankAccount"](10)  # type: ignore[operator]
    account.deposit(5)
    assert account.balance() == 15 and account.history() == [("deposit", 5)] and account.report() == "15 after 1"


def test_nothing_is_renamed_where_nothing_hides_a_method_or_the_new_name_is_taken() -> None:
    plain = "class A:\n    def __init__(self):\n        self.size = 0\n\n    def grow(self):\n        self.size += 1\n"
    assert unshadow("a.py", plain) == plain
    prop = "class A:\n    def __init__(self):\n        self.size = 0\n\n    @property\n    def size(self):\n        return 1\n"
    assert unshadow("a.py", prop) == prop  # a property is another matter
    taken = "class A:\n    def __init__(self):\n        self.n = 0\n        self._n = 1\n\n    def n(self):\n        return 2\n"
    assert unshadow("a.py", taken) == taken
    assert unshadow("a.js", BANK) == BANK and unshadow("a.py", "class (:\n") == "class (:\n"
