"""An exception a generated module raises and nothing defines is defined there, and only then."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from greenloop.agent.generate.raised import define_raised

# the 1.5B model's bank.py, as the generation bench recorded it (shortened)
BANK = ("from datetime import datetime\n\nclass BankAccount:\n    def __init__(self, balance=0):\n"
        "        self._balance = balance\n\n    def withdraw(self, amount):\n        if self._balance < amount:\n"
        "            raise InsufficientFunds(\"Insufficient funds\")\n        self._balance -= amount\n")


def test_a_raised_name_nothing_defines_gets_a_class_after_the_imports_and_the_module_then_works(tmp_path: Path) -> None:
    fixed = define_raised("bank.py", BANK, {})
    assert fixed.startswith("from datetime import datetime\n\n\nclass InsufficientFunds(Exception):\n    pass\n\n"
                            "\nclass BankAccount:")
    (tmp_path / "bank.py").write_text(fixed)
    script = ("from bank import BankAccount, InsufficientFunds\ntry:\n    BankAccount(1).withdraw(5)\n"
              "except InsufficientFunds:\n    print('raised')\n")
    run = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert run.stdout == "raised\n", run.stderr
    assert define_raised("bank.py", fixed, {}) == fixed  # defined now: nothing more to add
    # at the top of a module with no imports, and in the file's own line endings
    assert define_raised("m.py", "def f():\r\n    raise Boom()\r\n", {}) == \
        "class Boom(Exception):\r\n    pass\r\n\r\n\r\ndef f():\r\n    raise Boom()\r\n"


def test_no_class_where_the_name_is_defined_imported_planned_elsewhere_builtin_or_not_raised() -> None:
    home = {"errors.py": "class InsufficientFunds(Exception):\n    pass\n"}
    assert define_raised("bank.py", BANK, home) == BANK  # another module defines it: unbound.py imports it
    assert define_raised("bank.py", BANK, {}, elsewhere="errors.py: InsufficientFunds and other errors") == BANK
    imported = "from errors import InsufficientFunds\n" + BANK
    assert define_raised("bank.py", imported, {}) == imported
    for text in ("def f():\n    raise ValueError('x')\n",  # a builtin
                 "def f(e):\n    raise e\n",  # bound: a parameter
                 "def f():\n    raise error_of('x')\n",  # not a class name
                 "def f():\n    return InsufficientFunds\n",  # used, not raised
                 "def f(:\n"):
        assert define_raised("m.py", text, {}) == text, text
    assert define_raised("bank.js", "throw new InsufficientFunds()", {}) == "throw new InsufficientFunds()"
