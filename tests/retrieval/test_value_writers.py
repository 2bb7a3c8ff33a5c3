"""The value signal: the definitions that write an attribute the failing frames read (real pytest output)."""

from __future__ import annotations

from pathlib import Path

from greenloop.retrieval import Location, RepoIndex, locate
from greenloop.retrieval.tags import extract
from greenloop.retrieval.value_signals import reads
from tests.retrieval import projects

# A single (name, rate) pair is stored as it came; it crashes two calls down, where it is iterated.
SHOP = {
    "shop/__init__.py": "",
    "shop/cart.py": (
        "from shop.pricing import total_of\n\n\n"
        "class Cart:\n"
        "    def __init__(self, discounts=()):\n"
        "        self.items = []\n"
        "        self.discounts = discounts\n\n"
        "    def add(self, name, price):\n"
        "        self.items.append((name, price))\n"
        "        return self\n\n"
        "    def describe(self):\n"
        "        return ', '.join(f'{name}: {price}' for name, price in self.items)\n\n"
        "    def total(self):\n"
        "        return total_of(self.items, discounts=self.discounts)\n"
    ),
    "shop/pricing.py": (
        "def apply_rate(price, rate):\n    return price * (1 - rate)\n\n\n"
        "def discounted(price, discounts):\n"
        "    for _name, rate in discounts:\n"
        "        price = apply_rate(price, rate)\n"
        "    return price\n\n\n"
        "def total_of(items, discounts):\n"
        "    return sum(discounted(price, discounts) for _, price in items)\n"
    ),
    "shop/checkout.py": (
        "from shop.cart import Cart\n\n\n"
        "def checkout(order, discounts):\n"
        "    cart = Cart(discounts)\n"
        "    for name, price in order:\n"
        "        cart.add(name, price)\n"
        "    return cart.total()\n"
    ),
    "tests/test_checkout.py": (
        "from shop.checkout import checkout\n\n\n"
        "def test_one_discount_pair():\n"
        "    assert checkout([('tea', 4.0)], ('spring', 0.5)) == 2.0\n"
    ),
}

# A thread-local counter that only `enter` creates: `leave` before `enter` finds no attribute.
DEPTH = {
    "tracing/__init__.py": "",
    "tracing/scope.py": (
        "import threading\n\n"
        "state = threading.local()\n\n\n"
        "class Scope:\n"
        "    def __init__(self, name):\n"
        "        self.name = name\n\n"
        "    def enter(self):\n"
        "        state.__dict__.setdefault('level', 0)\n"
        "        state.level += 1\n"
        "        return self\n\n"
        "    def leave(self):\n"
        "        label = '  ' * state.level + self.name\n"
        "        return label\n\n"
        "    def __repr__(self):\n"
        "        return f'Scope({self.name!r})'\n"
    ),
    "tests/test_scope.py": (
        "from tracing.scope import Scope\n\n\n"
        "def test_leave_without_enter():\n"
        "    assert Scope('outer').leave() == 'outer'\n"
    ),
}


def _writer_notes(found: list[Location]) -> dict[str, str]:
    return {loc.symbol: s.note for loc in found for s in loc.signals if s.name == "writer"}


async def _ranked(root: Path, files: dict[str, str], test: str, top_k: int) -> list[Location]:
    index = RepoIndex()
    await index.update(projects.write(root, files))
    output = projects.pytest_output(root, test)
    assert " failed" in output, output[-2000:]
    return await locate(index, output, top_k=top_k)


async def test_the_writer_of_an_attribute_a_frame_reads_ranks_in_the_top_five(tmp_path: Path) -> None:
    found = await _ranked(tmp_path, SHOP, "tests/test_checkout.py", top_k=5)
    symbols = [loc.symbol for loc in found]
    assert "Cart.__init__" in symbols, [(loc.symbol, loc.why) for loc in found]
    note = _writer_notes(found)["Cart.__init__"]
    assert note == "writes `items`, `discounts`, which `Cart.total` reads on its line in the traceback"


async def test_an_attribute_error_finds_the_definition_that_sets_the_attribute(tmp_path: Path) -> None:
    found = await _ranked(tmp_path, DEPTH, "tests/test_scope.py", top_k=2)
    assert [loc.symbol for loc in found] == ["Scope.leave", "Scope.enter"], [(loc.symbol, loc.why) for loc in found]
    assert _writer_notes(found)["Scope.enter"] == "writes `level`, which the AttributeError in `Scope.leave` says is missing"


async def test_an_attribute_written_in_many_places_does_not_flood_the_ranking(tmp_path: Path) -> None:
    files = dict(SHOP)
    for number in range(8):  # eight more classes set `items`; only Cart sets `discounts`
        files[f"shop/kind{number}.py"] = (
            f"class Kind{number}:\n    def __init__(self):\n        self.items = []\n"
            f"        self.label = 'kind {number}'\n"
        )
    files["shop/pricing.py"] = SHOP["shop/pricing.py"].replace(  # the deeper frame reads `cart.items`
        "def total_of(items, discounts):\n    return sum(discounted(price, discounts) for _, price in items)\n",
        "def total_of(cart, discounts):\n    return sum(discounted(price, discounts) for _, price in cart.items)\n",
    )
    files["shop/cart.py"] = SHOP["shop/cart.py"].replace("total_of(self.items,", "total_of(self,")
    assert "cart.items" in files["shop/pricing.py"] and "total_of(self," in files["shop/cart.py"]
    found = await _ranked(tmp_path, files, "tests/test_checkout.py", top_k=10)
    notes = _writer_notes(found)
    assert notes.get("Cart.__init__") == "writes `discounts`, which `Cart.total` reads on its line in the traceback"
    assert not any(symbol.startswith("Kind") for symbol in notes), notes  # `items`: nine writers, not followed


def test_the_index_records_each_way_of_writing_an_attribute() -> None:
    source = (
        "class T:\n"
        "    def set_up(self, o):\n"
        "        self.a = 1\n"
        "        self.b, o.c = 2, 3\n"
        "        self.d += 1\n"
        "        setattr(o, 'e', 4)\n"
        "        o.__dict__.setdefault('f', 5)\n"
        "        o.__dict__['g'] = 6\n"
        "        x = self.h\n"
        "        self.i.append(x)\n"
    )
    (_, method) = extract("t.py", source.encode()).definitions
    assert method.writes == ("self.a", "self.b", "o.c", "self.d", "o.e", "o.f", "o.g")
    js = extract("t.js", b"class A { m() { this.a = 1; this.b += 1; this.c++; return this.d; } }").definitions
    assert js[-1].writes == ("this.a", "this.b", "this.c")
    rust = extract("t.rs", b"impl A { fn m(&mut self) { self.a = 1; self.b += 2; let c = self.c; } }").definitions
    assert rust[-1].writes == ("self.a", "self.b")


def test_reads_on_a_line_leave_out_calls_assignment_targets_and_strings() -> None:
    line = "self.total = f(self.items, key=obj.rate, label='x.y') + self.count() + 1.5  # self.z"
    assert reads(line) == [("self", "items"), ("obj", "rate")]
    assert reads("x = self.config.level + a[0].size") == [("self", "config"), ("config", "level"), ("", "size")]
    assert reads("half = self.total // self.parts") == [("self", "total"), ("self", "parts")]  # `//` divides
    assert reads("const half = this.total; // this.parts", "javascript") == [("this", "total")]
