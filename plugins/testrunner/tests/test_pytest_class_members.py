"""``rt test`` on the members of test classes as pytest collects and runs them: their order (nested classes
between the methods as written, inherited tests before the class's own), the class fixtures a nested
class shares with the class around it, and the class instance each test keeps. Each test runs pytest 9.2 and
``rt test`` (in one process and under ``--parallel 2``) on the same small project and compares the node ids
in order and what the tests and hooks record."""

from __future__ import annotations

from pathlib import Path

from rt.testing import run_cli, run_pytest, write_files

#: members in the order pytest runs them: the nested classes between the methods, as written, and the bases'
#: tests first (an override keeps the subclass's place)
_ORDER_MODULE = """
def test_first():
    pass


class TestOuter:
    def test_before(self):
        pass

    class TestInner:
        def test_inner(self):
            pass

        class TestDeepest:
            def test_deepest(self):
                pass

        def test_inner_after(self):
            pass

    def test_method(self):
        pass


def test_between():
    pass


class Base:
    def test_z_base(self):
        pass

    def test_shared(self):
        pass


class TestChild(Base):
    def test_a_child(self):
        pass

    def test_shared(self):
        pass
"""

#: a class fixture and xunit teardown_class around nested classes; a conftest.py hook that reads nextitem
#: makes rt link the tests (the class fixtures then end in the last test's own teardown)
_FIXTURE_MODULE = """
import pytest

EVENTS = []


@pytest.fixture(scope="class")
def resource(request):
    EVENTS.append(f"setup {request.cls.__name__}")
    yield
    EVENTS.append(f"teardown {request.cls.__name__}")


@pytest.mark.usefixtures("resource")
class TestOuter:
    def test_before(self):
        EVENTS.append("test_before")

    class TestInner:
        def test_inner(self, resource):
            EVENTS.append("test_inner")

    def test_method(self):
        EVENTS.append("test_method")

    @classmethod
    def teardown_class(cls):
        EVENTS.append("teardown_class outer")


class TestSecond:
    def test_second(self):
        EVENTS.append("test_second")

    class TestInnerLast:
        def test_inner_first(self, resource):
            EVENTS.append("test_inner_first")

        @classmethod
        def teardown_class(cls):
            EVENTS.append("teardown_class inner last")

    @classmethod
    def teardown_class(cls):
        EVENTS.append("teardown_class second")


class TestThird:
    class TestInnerOnly:
        def test_x(self, resource):
            EVENTS.append("test_x")

    def test_y(self, resource):
        EVENTS.append("test_y")


def test_zz_events():
    open("events.txt", "w").write("\\n".join(EVENTS))
"""


def _node_ids(output: str) -> list[str]:
    return [line.strip() for line in output.splitlines() if "::" in line and " " not in line.strip()]


def test_nested_classes_and_inherited_tests_run_in_pytests_order(tmp_path: Path) -> None:
    """pytest 9.2 runs a class's members in definition order, a nested class between the methods written
    around it, and a base class's tests before the subclass's own. rt ran the nested classes after the outer
    class's methods and the subclass's own tests first."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\n",
            "test_order.py": _ORDER_MODULE,
            "conftest.py": """
            def pytest_runtest_logstart(nodeid, location):
                with open("ran.txt", "a") as out:
                    out.write(nodeid + "\\n")
            """,
        },
    )
    expected = _node_ids(run_pytest("-p", "no:randomly", "--collect-only", "-q", cwd=tmp_path).stdout)
    assert expected[2:6] == [
        "test_order.py::TestOuter::TestInner::test_inner",
        "test_order.py::TestOuter::TestInner::TestDeepest::test_deepest",
        "test_order.py::TestOuter::TestInner::test_inner_after",
        "test_order.py::TestOuter::test_method",
    ], expected
    collected = _node_ids(run_cli("test", "--collect-only", cwd=tmp_path).stdout)
    assert collected == expected
    ran = tmp_path / "ran.txt"
    for args in ((), ("--parallel", "2")):  # the order they run in
        ran.unlink(missing_ok=True)
        rt_run = run_cli("test", *args, cwd=tmp_path)
        assert ran.read_text().splitlines() == expected, rt_run.output


def test_a_nested_class_shares_the_class_fixtures_of_the_class_around_it(tmp_path: Path) -> None:
    """A class-scoped fixture (and ``teardown_class``) set up for the outer class is the one the nested
    class's tests get while the outer class lasts, as pytest keeps a fixture's value until the scope it was
    made for ends: one set-up, not one per class, and the outer class's teardown after its last method. The
    same events under pytest, ``rt test`` and ``rt test --parallel 2``."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\n",
            "test_fixtures.py": _FIXTURE_MODULE,
            "conftest.py": """
            def pytest_runtest_teardown(item, nextitem):
                item.module.EVENTS.append(f"hook teardown {item.name}")
            """,
        },
    )
    events = tmp_path / "events.txt"
    pytest_run = run_pytest("-p", "no:randomly", cwd=tmp_path)
    expected = events.read_text()
    assert expected.startswith("setup TestOuter\ntest_before\nhook teardown test_before\ntest_inner\n"), (
        pytest_run.output
    )
    for args in ((), ("--parallel", "2")):
        events.unlink()
        rt_run = run_cli("test", *args, cwd=tmp_path)
        assert events.read_text() == expected, rt_run.output


def test_a_class_fixture_method_is_bound_to_the_class_whose_collection_found_it(tmp_path: Path) -> None:
    """pytest binds a class-scoped fixture written as an instance method to an instance of the class whose
    ``Class`` node collected it: the outer class's for a test of a class nested in it (rt bound it to the
    nested class, ``'TestInner' == 'TestOuter'``), a subclass's for a fixture it inherits. Each class's
    first test is its fixture's first user, so the value is made for it. pytest 9.2: 3 passed."""
    write_files(
        tmp_path,
        {
            "test_bound.py": """
            import pytest


            class TestOuter:
                @pytest.fixture(scope="class")
                def cf(self):
                    return type(self).__name__

                class TestInner:
                    def test_in(self, cf):
                        assert cf == "TestOuter"


            class Base:
                @pytest.fixture(scope="class")
                def named(self):
                    return type(self).__name__


            class TestSub(Base):
                class TestSubInner:
                    def test_sub_inner(self, named):
                        assert named == "TestSub"

                def test_sub(self, named):
                    assert named == "TestSub"
            """,
        },
    )
    by_pytest = run_pytest("-p", "no:randomly", "-W", "ignore", cwd=tmp_path)
    assert "3 passed" in by_pytest.stdout, by_pytest.output
    for args in ((), ("--parallel", "2")):
        result = run_cli("test", "-p", "no:randomly", *args, cwd=tmp_path)
        assert result.code == 0, result.output
        assert " 3 pass" in result.stderr


#: hooks that read each test's class instance after its phases and at the session's end
_INSTANCE_CONFTEST = """
import unittest
import weakref

import pytest

REFS = {}
LOG = []


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item, nextitem):
    if item.cls is not None and not issubclass(item.cls, unittest.TestCase):
        REFS[item.name] = (weakref.ref(item.instance), item.instance is item.obj.__self__)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    instance = item.instance
    name = None if instance is None else type(instance).__name__
    LOG.append((item.name, call.when, name, getattr(instance, "marker", None)))
    return report


def pytest_sessionfinish(session):
    for item in session.items:
        LOG.append(("finish", item.name, getattr(item.instance, "marker", "no marker")))
    with open("log.txt", "w") as out:
        out.write("\\n".join(map(repr, LOG)))
"""

_INSTANCE_MODULE = """
import gc
import unittest

import pytest

from conftest import LOG, REFS


class TestA:
    value = 0

    @pytest.fixture(scope="class")
    def class_fixture(self, request):
        LOG.append(("class fixture's request.instance", request.instance))
        self.from_class_fixture = True
        return self

    @pytest.fixture
    def setter(self, request):
        self.value = 5
        LOG.append(("function fixture's request.instance is self", request.instance is self))
        return self

    def test_one(self, setter, class_fixture, request):
        assert setter is self and request.instance is self and request.node.instance is self
        assert class_fixture is not self
        assert not hasattr(self, "from_class_fixture")
        assert self.value == 5
        self.marker = "one"

    def test_two(self, class_fixture):
        assert self.value == 0
        assert class_fixture.from_class_fixture
        self.marker = "two"


class TestCaseStyle(unittest.TestCase):
    def test_u(self):
        self.marker = "u"


def test_refs():
    gc.collect()
    LOG.append(("alive", sorted((name, ref() is not None, same) for name, (ref, same) in REFS.items())))
"""


def test_a_test_class_instance_stays_with_its_item(tmp_path: Path) -> None:
    """pytest makes one instance of the class per test and keeps it with the item for the session: what the
    test set on ``self`` is there for a ``pytest_runtest_makereport`` hook of its teardown and for
    ``pytest_sessionfinish`` (a ``unittest.TestCase``'s is dropped after its teardown: asked again, it is
    another), and a weak reference to it lives on. rt dropped it after the teardown (None to those hooks, the
    reference dead). A class-scoped fixture written as an instance method runs on an instance of its own
    (pytest's ``PytestRemovedIn10Warning`` says so), with ``request.instance`` None: rt bound it to the first
    test's instance and gave it that instance."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\n",
            "conftest.py": _INSTANCE_CONFTEST,
            "test_instances.py": _INSTANCE_MODULE,
        },
    )
    log = tmp_path / "log.txt"
    pytest_run = run_pytest("-p", "no:randomly", cwd=tmp_path)
    expected = log.read_text()
    assert "('test_one', 'teardown', 'TestA', 'one')" in expected, pytest_run.output
    assert "('alive', [('test_one', True, True), ('test_two', True, True)])" in expected, expected
    for args in ((), ("--parallel", "2")):
        log.unlink()
        rt_run = run_cli("test", *args, cwd=tmp_path)
        assert log.read_text() == expected, rt_run.output


#: hooks that read a ``unittest.TestCase`` test's ``item.obj`` in each phase, and the test that checks it is
#: the method bound to the case it runs on
_UNITTEST_OBJ_CONFTEST = """
import unittest

SEEN = []


def _bound(item, when):
    obj = item.obj
    owner = getattr(obj, "__self__", None)
    SEEN.append((item.name, when, type(obj).__name__, owner is item.instance, isinstance(owner, unittest.TestCase)))


def pytest_runtest_setup(item):
    _bound(item, "setup")


def pytest_runtest_call(item):
    _bound(item, "call")


def pytest_runtest_teardown(item):
    _bound(item, "teardown")


def pytest_sessionfinish(session):
    with open("log.txt", "w") as out:
        out.write("\\n".join(map(repr, SEEN)))
"""

_UNITTEST_OBJ_MODULE = """
import unittest

import pytest


class TestCaseStyle(unittest.TestCase):
    def test_u(self):
        assert self.__class__.__name__ == "TestCaseStyle"

    def test_v(self):
        pass


@pytest.fixture
def case_seen(request):
    return request.node.obj


def test_plain(case_seen):
    assert case_seen is test_plain
"""


def test_a_unittest_tests_obj_is_its_method_bound_to_the_case(tmp_path: Path) -> None:
    """Plugins read ``item.obj.__self__`` and ``item.instance`` of a ``unittest.TestCase`` test: pytest's
    ``item.obj`` is the test's method bound to the case instance it runs on (``item.instance``); rt gave the
    unbound function (``function``, no ``__self__``). pytest 9.2: 3 passed, the same log."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\n",
            "conftest.py": _UNITTEST_OBJ_CONFTEST,
            "test_cases.py": _UNITTEST_OBJ_MODULE,
        },
    )
    log = tmp_path / "log.txt"
    pytest_run = run_pytest("-p", "no:randomly", cwd=tmp_path)
    expected = log.read_text()
    assert "('test_u', 'call', 'method', True, True)" in expected, pytest_run.output
    assert "3 passed" in pytest_run.stdout, pytest_run.output
    for args in ((), ("--parallel", "2")):
        log.unlink()
        rt_run = run_cli("test", *args, cwd=tmp_path)
        assert log.read_text() == expected, rt_run.output
        assert " 3 pass" in rt_run.stderr, rt_run.output
