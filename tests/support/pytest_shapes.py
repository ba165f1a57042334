"""Hidden test files of shapes pytest serves with fixtures, marks and xunit set-ups, as real acceptance tests write
them, of the red team's `calc` (tests/gate/test_second_opinion.py: the bulk discount, two small orders). Each was not
double-checked, or blocked the fix: the second run serves each in pytest's order now (`bare_served.order`)."""

# Fixtures of every scope, xunit set-ups of the module, its functions, a class and its methods, autouse fixtures of the
# module (two of one scope defined against the order of their names: pytest reads them by name) and of a class (its
# own, bound to the test's instance), `usefixtures` in the module's `pytestmark` and on a test. Each test asserts the
# order pytest set them up in (the module's first test all of it; a class's test, what pytest set up for the class).
ORDERED = '''import pytest
import calc

LOG = []


@pytest.fixture(scope="session")
def sess():
    LOG.append("sess")
    return calc.price


@pytest.fixture(scope="package")
def pkg():
    LOG.append("pkg")


@pytest.fixture(scope="module")
def mod(sess):
    LOG.append("mod")
    return sess


@pytest.fixture(scope="class")
def cls_(mod):
    LOG.append("cls")
    return mod


@pytest.fixture
def fn(cls_):
    LOG.append("fn")
    return cls_


@pytest.fixture(autouse=True)
def zauto():
    LOG.append("zauto")


@pytest.fixture(autouse=True)
def aauto():
    LOG.append("aauto")


@pytest.fixture(autouse=True, scope="module")
def bauto():
    LOG.append("bauto")


@pytest.fixture
def used():
    LOG.append("used")


pytestmark = pytest.mark.usefixtures("used")


def setup_module():
    LOG.append("sm")


def setup_function(function):
    LOG.append("sf")


@pytest.mark.usefixtures("pkg")
def test_ten_units_get_the_bulk_discount(fn, tmp_path):
    assert LOG == ["sess", "pkg", "sm", "bauto", "mod", "cls", "sf", "aauto", "zauto", "used", "fn"]
    assert fn(10) == 900


class TestSmall:
    @classmethod
    def setup_class(cls):
        LOG.append("sc")

    def setup_method(self, method):
        LOG.append("sme")

    @pytest.fixture(autouse=True)
    def own(self, mod):
        LOG.append("own")
        self.price = mod

    @pytest.mark.parametrize("units, want", [(2, 200), (1, 100)])
    def test_small_orders_pay_the_full_price(self, fn, units, want):
        assert LOG[-6:] == ["aauto", "zauto", "sme", "own", "used", "fn"]
        assert LOG[LOG.index("sc"):LOG.index("sc") + 3] == ["sc", "cls", "aauto"] and LOG.index("mod") < LOG.index("sc")
        assert self.price(units) == want
'''

# `parametrize` in the module's `pytestmark`; `usefixtures` and `parametrize` in a class's
PARAMETRIZED = '''import pytest
import calc

pytestmark = pytest.mark.parametrize("rate", [90])


@pytest.fixture
def bulk():
    return 10


def test_ten_units_get_the_bulk_discount(rate, bulk):
    assert calc.price(bulk) == bulk * rate


class TestSmall:
    pytestmark = [pytest.mark.usefixtures("bulk"), pytest.mark.parametrize("units, want", [(2, 200), (1, 100)])]

    def test_small_orders_pay_the_full_price(self, units, want, rate):
        assert calc.price(units) == want
'''

# A test class's own autouse fixture: the second run did not call it (AttributeError: the fix blocked as `disagree`)
OWN_FIXTURE = '''import pytest
import calc


class TestBulk:
    @pytest.fixture(autouse=True)
    def bulk(self):
        self.units = 10

    def test_ten_units_get_the_bulk_discount(self):
        assert calc.price(self.units) == 900


@pytest.mark.parametrize("units, want", [(2, 200), (1, 100)])
def test_small_orders_pay_the_full_price(units, want):
    assert calc.price(units) == want
'''

# nose's `setup`/`teardown` (a plain helper since pytest 8.0 dropped nose) and a test module's
# `pytest_collection_modifyitems` (pytest calls a conftest's, never a test module's): plain functions pytest never calls
# A test class's own fixtures scoped wider than its tests (pytest binds an instance method's to an instance of its own,
# made at collection, not the test's: `self.rate` set there is not the test's; a classmethod's to the class), one autouse.
CLASS_WIDE = '''import pytest
import calc


class TestBulk:
    @pytest.fixture(scope="class")
    def rates(self):
        self.rate = 90
        return {"bulk": 90}

    @pytest.fixture(scope="class", autouse=True)
    @classmethod
    def units(cls):
        cls.units = 10
        yield
        del cls.units

    def test_ten_units_get_the_bulk_discount(self, rates):
        assert not hasattr(self, "rate")
        assert rates == {"bulk": 90}
        assert calc.price(self.units) == 900


@pytest.mark.parametrize("units, want", [(2, 200), (1, 100)])
def test_small_orders_pay_the_full_price(units, want):
    assert calc.price(units) == want
'''


# A module's `pytestmark` annotated, then added to by `+=` (its `usefixtures` from the addition: the test asserts it ran).
MARKED_MORE = '''import pytest
import calc

pytestmark: list = [pytest.mark.slow]
pytestmark += [pytest.mark.usefixtures("priced")]
PRICED = []


@pytest.fixture
def priced():
    PRICED.append(calc.price)
    yield
    PRICED.clear()


def test_ten_units_get_the_bulk_discount():
    assert PRICED == [calc.price]
    assert calc.price(10) == 900


@pytest.mark.parametrize("units, want", [(2, 200), (1, 100)])
def test_small_orders_pay_the_full_price(units, want):
    assert calc.price(units) == want
'''


# A TestCase with both unittest's class set-up and pytest's xunit one (pytest 9 calls `setUpClass` first, 8.0 after
# `setup_class`: served where the first run's pytest registers unittest's first, `bare_plan.unit_first`)
UNIT_BOTH = '''import unittest

import calc


class TestBulk(unittest.TestCase):
    LOG = []

    @classmethod
    def setUpClass(cls):
        cls.LOG.append("setUpClass")

    @classmethod
    def setup_class(cls):
        cls.LOG.append("setup_class")
        cls.units = 10

    def setUp(self):
        self.LOG.append("setUp")

    def test_ten_units_get_the_bulk_discount(self):
        assert self.LOG[:3] == ["setUpClass", "setup_class", "setUp"]  # (another test's setUp after them in pytest)
        assert calc.price(self.units) == 900

    def test_small_orders_pay_the_full_price(self):
        assert calc.price(2) == 200
'''


PLAIN_HOOKS = '''import pytest
import calc


def setup():
    return 10


def teardown():
    raise AssertionError("a test's own helper, never called")


def pytest_collection_modifyitems(items):
    items.reverse()


class TestBulk:
    def setup(self):
        self.units = setup()

    def test_ten_units_get_the_bulk_discount(self):
        self.setup()
        assert calc.price(self.units) == 900


@pytest.mark.parametrize("units, want", [(2, 200), (1, 100)])
def test_small_orders_pay_the_full_price(units, want):
    assert calc.price(units) == want
'''

# unittest TestCases with pytest's xunit set-ups (`setup_class`, `setup_method`: pytest calls them around unittest's
# own) and with an autouse fixture of their own (the second run did not call it: the fix blocked as `disagree`)
UNIT_XUNIT = '''import unittest

import pytest
import calc


class TestBulk(unittest.TestCase):
    LOG = []

    @classmethod
    def setup_class(cls):
        cls.LOG.append("setup_class")
        cls.units = 10

    def setup_method(self, method):
        self.LOG.append("setup_method")
        self.method = method

    def setUp(self):
        self.LOG.append("setUp")

    def teardown_method(self, method):
        assert method == self.method

    def test_ten_units_get_the_bulk_discount(self):
        assert self.LOG == ["setup_class", "setup_method", "setUp"]
        assert calc.price(self.units) == 900


class TestSmall(unittest.TestCase):
    @pytest.fixture(autouse=True)
    def orders(self):
        self.orders = {2: 200, 1: 100}

    def test_small_orders_pay_the_full_price(self):
        for units, want in self.orders.items():
            assert calc.price(units) == want
'''

# A module's `pytest_generate_tests` (pytest calls it for each test before it reads the test's marks: its parameters vary
# slowest), reading `metafunc.fixturenames` and `metafunc.function`, its `parametrize` names written out
GENERATED = '''import pytest
import calc


def pytest_generate_tests(metafunc):
    if "want" in metafunc.fixturenames:
        metafunc.parametrize("units, want", [(2, 200), (1, 100)])
    if metafunc.function.__name__.endswith("discount"):
        metafunc.parametrize("bulk", [10], ids=["ten"])


@pytest.fixture
def rate():
    return 90


def test_ten_units_get_the_bulk_discount(bulk, rate):
    assert calc.price(bulk) == bulk * rate


@pytest.mark.parametrize("extra", [0])
def test_small_orders_pay_the_full_price(units, want, extra):
    assert calc.price(units) == want + extra
'''

# Marks decorating test classes (`usefixtures` on a plain class after its `pytestmark`, a skipif, `usefixtures` on a
# TestCase as pytest's documentation shows it): the shim's mark failed on a class (AttributeError at the import, every
# test of the file failed: the fix blocked as `disagree`); served as the class's marks now
DECORATED = '''import unittest

import pytest
import calc

ORDER = []


@pytest.fixture
def first():
    ORDER.append("first")


@pytest.fixture
def second():
    ORDER.append("second")


@pytest.mark.usefixtures("second")
@pytest.mark.skipif(False, reason="runs")
class TestBulk:
    pytestmark = pytest.mark.usefixtures("first")

    def test_ten_units_get_the_bulk_discount(self):
        assert ORDER == ["first", "second"]
        assert calc.price(10) == 900


@pytest.mark.usefixtures("second")
class TestOne(unittest.TestCase):
    def test_one_unit_pays_the_full_price(self):
        assert ORDER[-1] == "second"
        assert calc.price(1) == 100


@pytest.mark.parametrize("units, want", [(2, 200), (1, 100)])
def test_small_orders_pay_the_full_price(units, want):
    assert calc.price(units) == want
'''

# A test's parameter named as a fixture of the file overrides that fixture for the whole closure, as pytest documents
# ("override a fixture with direct test parametrization"): every fixture that asks for the name gets the parameter, an
# autouse one too, and what only the overridden fixture asked for is not set up. The second run handed such a fixture
# the file's fixture (each honest file blocked as `disagree`). OVERRIDE: a `parametrize` mark; AUTOPARAM: an autouse
# fixture asking for it; GENOVER: a module's `pytest_generate_tests` (pytest walks the closure first, then prunes it).
OVERRIDE = '''import pytest
import calc


@pytest.fixture
def units():
    return 10


@pytest.fixture
def total(units):
    return calc.price(units)


def test_ten_units_get_the_bulk_discount(total):
    assert total == 900


@pytest.mark.parametrize("units, want", [(2, 200), (1, 100)])
def test_small_orders_pay_the_full_price(total, want):
    assert total == want
'''
AUTOPARAM = '''import pytest
import calc

SEEN = []


@pytest.fixture
def units():
    return 10


@pytest.fixture(autouse=True)
def record(units):
    SEEN.append(units)
    yield
    SEEN.clear()


def test_ten_units_get_the_bulk_discount(units):
    assert SEEN == [10]
    assert calc.price(units) == 900


@pytest.mark.parametrize("units", [2, 1])
def test_small_orders_pay_the_full_price(units):
    assert SEEN == [units]
    assert calc.price(units) == units * 100
'''
GENOVER = '''import pytest
import calc

STOCK = []


def pytest_generate_tests(metafunc):
    if "units" in metafunc.fixturenames and metafunc.function.__name__.startswith("test_small"):
        metafunc.parametrize("units", [2, 1])


@pytest.fixture
def stock():
    STOCK.append("counted")
    yield
    STOCK.clear()


@pytest.fixture
def units(stock):
    return 10


@pytest.fixture
def total(units):
    return calc.price(units)


def test_ten_units_get_the_bulk_discount(total):
    assert STOCK == ["counted"]
    assert total == 900


def test_small_orders_pay_the_full_price(units, total):
    assert STOCK == []
    assert total == units * 100
'''
