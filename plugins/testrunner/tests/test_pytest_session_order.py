"""``rt test`` runs a pytest session's items in the order its ``pytest_collection_modifyitems`` hooks left them,
across files, with the fixture set-up and teardown pytest does at each boundary (session_order.py).

pytest runs ``session.items`` whatever file each item is from: pytest-randomly shuffles the modules, pytest-order
moves tests across files, a conftest.py moves the slow tests to the end of the session. A module's (class's,
package's) fixtures are torn down when the next item is not in it and set up again when a later item comes back
to it. rt ran the files one after the other, each in the order the hook left its own items. Each test writes
a small project whose tests and fixtures log what runs to a file, runs pytest 9.2 and ``rt test`` on it, and
compares the logs, the node ids of ``--collect-only`` and the counts."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from rt.testing import counts_from_pytest, run_cli, run_pytest, summary_counts, write_files

#: the project's conftest.py: ``record(event)`` appends a line to events.log (what ran, in order)
_RECORD = """
import os

import pytest

LOG = os.path.join(os.path.dirname(__file__), "events.log")


def record(event):
    with open(LOG, "a") as log:
        log.write(event + "\\n")
"""


#: a test module of two classes: TestOne (test_a, test_b) and TestTwo (test_c)
_TWO_CLASSES = """
class TestOne:
    def test_a(self):
        pass

    def test_b(self):
        pass


class TestTwo:
    def test_c(self):
        pass
"""

#: SQLAlchemy's testing plugin's way with its ``__backend__`` classes: a subclass per backend set on the module,
#: collected with pytest's ``Class.collect()`` under the module's node, whose items stand in ``items`` for the
#: class's, each looked up by the name of the item it replaces
_BACKEND_SUBCLASSES = """

def pytest_collection_modifyitems(items):
    rebuilt = {}
    for node in {item.getparent(pytest.Class) for item in items} - {None}:
        if not getattr(node.cls, "__backend__", False):
            continue
        module = node.getparent(pytest.Module)
        name = f"{node.cls.__name__}_sqlite"
        setattr(module.obj, name, type(name, (node.cls,), {"backend": "sqlite"}))
        built = pytest.Class.from_parent(name=name, parent=module)
        by_name = rebuilt.setdefault(node.cls, {})
        for made in built.collect():
            by_name.setdefault(made.name, []).append(made)
    new = []
    for item in items:
        new.extend(rebuilt[item.cls].get(item.name, []) if item.cls in rebuilt else [item])
    items[:] = new
"""


#: a test module of a plain class, a ``__backend__`` class (:data:`_BACKEND_SUBCLASSES` replaces it by its
#: ``_sqlite`` subclass) and a function, each test logging what ran
_ONE_PLAIN_ONE_BACKEND_CLASS = """
from conftest import record


class TestOne:
    def test_a(self):
        record("a")


class TestTwo:
    __backend__ = True
    backend = None

    def test_c(self):
        record(f"c on {self.backend}")

    def test_d(self):
        record(f"d on {self.backend}")


def test_outside():
    record("outside")
"""


def _conftest(hooks: str) -> str:
    """A conftest.py with :data:`_RECORD` and ``hooks``."""
    return _RECORD + textwrap.dedent(hooks)


def _both(root: Path, *args: str) -> tuple[tuple[dict[str, int], str], tuple[dict[str, int], str, str]]:
    """pytest's (counts, events.log) and rt's (counts, events.log, output) on ``root``, each run starting with
    no log."""
    log = root / "events.log"
    log.unlink(missing_ok=True)
    by_pytest = run_pytest(*args, cwd=root, timeout=180)
    pytest_log = log.read_text() if log.exists() else ""
    log.unlink(missing_ok=True)
    by_rt = run_cli("test", *args, cwd=root, timeout=180)
    rt_log = log.read_text() if log.exists() else ""
    return (counts_from_pytest(by_pytest.stdout), pytest_log), (
        summary_counts(by_rt.stderr),
        rt_log,
        by_rt.output,
    )


def _collected(root: Path, *args: str) -> tuple[list[str], list[str]]:
    """The node ids ``--collect-only -q`` lists, by pytest and by rt, in their order."""
    by_pytest = run_pytest("--collect-only", "-q", *args, cwd=root, timeout=180)
    by_rt = run_cli("test", "--collect-only", *args, cwd=root, timeout=180)
    return (
        [line for line in by_pytest.stdout.splitlines() if "::" in line],
        [line for line in by_rt.stdout.splitlines() if "::" in line],
    )


def test_a_hook_that_moves_the_slow_tests_to_the_end_of_the_session(tmp_path: Path) -> None:
    """A conftest.py sorts the marked ``slow`` tests after every other one, whatever their file: pytest runs
    ``test_a.py`` (part of it), ``test_b.py``, ``pkg/test_c.py``, then ``test_a.py`` again, tearing down the
    module's fixture, its ``setup_module``, its class's ``setup_class`` and the package's fixture when the run
    leaves them and setting them up again when it comes back; each test's ``nextitem`` is the session's next
    test. rt ran each file whole (the slow tests last within their file): other set-ups, other teardowns,
    another order. pytest 9.2: 8 passed, in the same order, with the same set-ups and teardowns."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\nmarkers = slow\n",
            "conftest.py": _conftest(
                """

            def pytest_collection_modifyitems(items):
                items.sort(key=lambda item: item.get_closest_marker("slow") is not None)


            def pytest_runtest_teardown(item, nextitem):
                record(f"next of {item.name}: {nextitem.name if nextitem else None}")


            @pytest.fixture(scope="module")
            def mod(request):
                record(f"set up {request.module.__name__}")
                yield
                record(f"tear down {request.module.__name__}")
            """
            ),
            "test_a.py": """
            import pytest
            from conftest import record


            def setup_module():
                record("setup_module a")


            def teardown_module():
                record("teardown_module a")


            @pytest.mark.slow
            def test_a1(mod):
                record("a1")


            def test_a2(mod):
                record("a2")


            class TestA:
                @classmethod
                def setup_class(cls):
                    record("setup_class A")

                @classmethod
                def teardown_class(cls):
                    record("teardown_class A")

                @pytest.mark.slow
                def test_x(self, mod):
                    record("A.x")

                def test_y(self, mod):
                    record("A.y")
            """,
            "test_b.py": """
            import pytest
            from conftest import record


            def test_b1(mod):
                record("b1")


            @pytest.mark.slow
            def test_b2(mod):
                record("b2")
            """,
            "pkg/__init__.py": "",
            "pkg/conftest.py": """
            import pytest
            from conftest import record


            @pytest.fixture(scope="package")
            def package_resource():
                record("set up pkg")
                yield
                record("tear down pkg")
            """,
            "pkg/test_c.py": """
            import pytest
            from conftest import record


            def test_c1(package_resource):
                record("c1")


            @pytest.mark.slow
            def test_c2(package_resource):
                record("c2")
            """,
        },
    )
    (pytest_counts, pytest_log), (rt_counts, rt_log, output) = _both(tmp_path, "-p", "no:randomly")
    assert pytest_counts == {"pass": 8}
    assert rt_counts == pytest_counts, output
    assert pytest_log.splitlines()[:5] == [
        "set up pkg",
        "c1",
        "next of test_c1: test_a2",
        "tear down pkg",
        "setup_module a",
    ]
    assert rt_log == pytest_log, output
    pytest_ids, rt_ids = _collected(tmp_path, "-p", "no:randomly")
    assert rt_ids == pytest_ids
    assert pytest_ids[-1] == "test_b.py::test_b2"


def test_a_hook_that_shuffles_the_modules_as_pytest_randomly_does(tmp_path: Path) -> None:
    """pytest-randomly's hook reorders the modules (by a hash of its seed and their names), then the classes
    and functions inside each: a module's tests stay together, but not in the files' order. rt ran the files
    in its own order. Here a conftest.py hook puts the modules in reverse order and a module-scoped
    parametrized fixture groups each module's tests by its value: pytest 9.2: 6 passed."""
    write_files(
        tmp_path,
        {
            "conftest.py": _conftest(
                """

            def pytest_collection_modifyitems(items):
                files = list(dict.fromkeys(item.path for item in items))
                items.sort(key=lambda item: -files.index(item.path))


            @pytest.fixture(scope="module", params=["x", "y"])
            def value(request):
                record(f"set up {request.module.__name__} {request.param}")
                yield request.param
                record(f"tear down {request.module.__name__} {request.param}")
            """
            ),
            "test_1.py": """
            from conftest import record


            def test_one(value):
                record(f"one {value}")


            def test_plain():
                record("plain")
            """,
            "test_2.py": """
            from conftest import record


            def test_two(value):
                record(f"two {value}")
            """,
        },
    )
    (pytest_counts, pytest_log), (rt_counts, rt_log, output) = _both(tmp_path, "-p", "no:randomly")
    assert pytest_counts == {"pass": 5}
    assert rt_counts == pytest_counts, output
    assert pytest_log.splitlines()[0] == "set up test_2 x"
    assert rt_log == pytest_log, output
    assert _collected(tmp_path, "-p", "no:randomly")[1][0] == "test_2.py::test_two[x]"


def test_pytest_order_across_files_and_a_session_scoped_dependency(tmp_path: Path) -> None:
    """pytest-order's ``@pytest.mark.order(n)`` moves tests across files; pytest-dependency's
    ``scope="session"`` skips a test whose dependency has not run (or not passed) before it, a test of
    another file: both need the session's order (and pytest-dependency finds its results on
    ``item.getparent(pytest.Session)``, which rt answered with None: every such test was an error).
    pytest 9.2: 6 passed, 1 skipped (the test that depends on one that runs after it)."""
    write_files(
        tmp_path,
        {
            "conftest.py": _conftest(
                """

            @pytest.fixture(autouse=True)
            def each(request):
                record(request.node.nodeid)
            """
            ),
            "test_one.py": """
            import pytest


            @pytest.mark.order(3)
            def test_third():
                pass


            def test_plain_one():
                pass


            @pytest.mark.dependency(scope="session")
            @pytest.mark.order(1)
            def test_first():
                pass
            """,
            "test_two.py": """
            import pytest


            @pytest.mark.dependency(depends=["test_one.py::test_first"], scope="session")
            @pytest.mark.order(2)
            def test_second():
                pass


            @pytest.mark.dependency(scope="session")
            def test_plain_two():
                pass


            @pytest.mark.dependency(depends=["test_one.py::test_plain_one"], scope="session")
            def test_needs_an_unmarked_test():
                pass


            @pytest.mark.dependency(depends=["test_two.py::test_plain_two"], scope="session")
            def test_needs_a_test_before_it():
                pass
            """,
        },
    )
    (pytest_counts, pytest_log), (rt_counts, rt_log, output) = _both(tmp_path, "-p", "no:randomly")
    assert pytest_counts == {"pass": 6, "skip": 1}
    assert rt_counts == pytest_counts, output
    assert pytest_log.splitlines()[:3] == [
        "test_one.py::test_first",
        "test_two.py::test_second",
        "test_one.py::test_third",
    ]
    assert rt_log == pytest_log, output


def test_a_session_scoped_parameter_groups_the_tests_of_every_file(tmp_path: Path) -> None:
    """pytest groups the session's items by the value of a session-scoped parametrized fixture, across files
    (and a package-scoped one's across the package's files), so it is set up once per value: every test with
    ``x``, then every one with ``y``. rt grouped the tests of each file, and set the fixture up again at each
    file (4 set-ups for 2 values). pytest 9.2: 8 passed, 2 set-ups."""
    write_files(
        tmp_path,
        {
            "conftest.py": _conftest(
                """

            @pytest.fixture(scope="session", params=["x", "y"])
            def backend(request):
                record(f"set up {request.param}")
                yield request.param
                record(f"tear down {request.param}")
            """
            ),
            "pkg/__init__.py": "",
            "pkg/test_p.py": """
            from conftest import record


            def test_p1(backend):
                record(f"p1 {backend}")


            def test_p2(backend):
                record(f"p2 {backend}")
            """,
            "test_q.py": """
            from conftest import record


            def test_q(backend):
                record(f"q {backend}")


            def test_plain():
                record("plain")
            """,
            "test_r.py": """
            from conftest import record


            def test_r(backend):
                record(f"r {backend}")
            """,
        },
    )
    (pytest_counts, pytest_log), (rt_counts, rt_log, output) = _both(tmp_path, "-p", "no:randomly")
    assert pytest_counts == {"pass": 9}
    assert rt_counts == pytest_counts, output
    assert pytest_log.count("set up") == 2
    assert rt_log == pytest_log, output
    pytest_ids, rt_ids = _collected(tmp_path, "-p", "no:randomly")
    assert rt_ids == pytest_ids


def test_a_hook_sees_one_node_per_class_and_builds_pytest_classes_under_them(tmp_path: Path) -> None:
    """SQLAlchemy 2.1.9's testing plugin: its ``pytest_collection_modifyitems`` takes the set of the items'
    ``getparent(pytest.Class)``, marks each (``add_marker``), builds a ``pytest.Class`` of a class under the
    class's module node (``Class.from_parent(name=..., parent=module)``) and collects it with pytest's own
    ``Class.collect()``; its ``pytest_runtest_teardown`` ends a test class when ``nextitem.getparent(
    pytest.Class) is not`` the current one. rt made a new class node for each test (the class ended after
    every test: its tables dropped, "no such table" at the next test's set-up), class nodes had no
    ``add_marker``, and pytest's ``Class`` could not be made under rt's module node (no structured ``id``):
    one collection error. pytest 9.2: 4 passed, the same log."""
    write_files(
        tmp_path,
        {
            "conftest.py": _conftest(
                """

                def pytest_collection_modifyitems(items):
                    classes = {item.getparent(pytest.Class) for item in items} - {None}
                    record(f"{len(classes)} classes")
                    for node in sorted(classes, key=lambda node: node.name):
                        node.add_marker("backend")
                        module = node.getparent(pytest.Module)
                        again = pytest.Class.from_parent(name=node.name, parent=module)
                        names = [child.name for child in again.collect()]
                        record(f"{module.name} {again.nodeid}: {names}")


                def pytest_runtest_setup(item):
                    node = item.getparent(pytest.Class)
                    marked = node is not None and node.get_closest_marker("backend") is not None
                    record(f"{item.name} marked: {marked}")


                def pytest_runtest_teardown(item, nextitem):
                    node = item.getparent(pytest.Class)
                    if node is not None and (nextitem is None or nextitem.getparent(pytest.Class) is not node):
                        record(f"end of {node.name}")
                """
            ),
            "test_classes.py": _TWO_CLASSES + "\n\ndef test_outside():\n    pass\n",
        },
    )
    (pytest_counts, pytest_log), (rt_counts, rt_log, output) = _both(tmp_path, "-p", "no:randomly")
    assert pytest_counts == {"pass": 4}
    assert rt_counts == pytest_counts, output
    assert "end of TestOne" in pytest_log
    assert "test_classes.py test_classes.py::TestOne: ['test_a', 'test_b']" in pytest_log
    assert rt_log == pytest_log, output


def test_items_a_hook_collected_itself_from_a_class_it_built_run_in_place_of_the_originals(
    tmp_path: Path,
) -> None:
    """SQLAlchemy 2.1.9's testing plugin replaces the items of each ``__backend__`` class by those of a
    subclass per database backend (``type(name, (cls,), {...})`` set on the module), which it collects with
    pytest's own ``Class.collect()`` under the module's node and puts in ``items``. rt ran only the items it
    had made itself: the hook's were left out (SQLAlchemy's test/sql/test_resultset.py: pytest 296 passed,
    4 skipped; rt 1 collection error, then 33 passed). rt collects such a class as a test class of the file.
    pytest 9.2: 4 passed, ``TestTwo_sqlite::test_c`` and ``::test_d`` in place of ``TestTwo``'s."""
    write_files(
        tmp_path,
        {
            "conftest.py": _conftest(_BACKEND_SUBCLASSES),
            "test_backends.py": _ONE_PLAIN_ONE_BACKEND_CLASS,
        },
    )
    _same_backend_run(tmp_path, {"pass": 4}, "c on sqlite", "test_backends.py::TestTwo_sqlite::test_c")


def test_a_class_a_hook_collects_itself_gives_one_item_per_parametrized_case_named_with_its_id(
    tmp_path: Path,
) -> None:
    """SQLAlchemy 2.1.9's testing plugin looks each item of a class it collected itself up by the name of
    the item it replaces (``rebuilt[cls]["test_ddl[construct]"]``): pytest's ``Class.collect()`` gives one
    item per parametrized case, named with its id (stacked ``parametrize``, ``ids``, ``pytest.param(id=)``,
    a fixture's ``params``). rt gave one item per function, named without an id, so the hook found nothing
    and the cases were left out (test/base test/sql: pytest 9482 passed, 397 skipped; rt 8616, 50). pytest
    9.2: 9 passed, 4 skipped (the marks of the class and of the method apply), the same node ids and log."""
    write_files(
        tmp_path,
        {
            "conftest.py": _conftest(_BACKEND_SUBCLASSES),
            "test_backends.py": """
            import pytest

            from conftest import record


            @pytest.fixture(params=[1, 2], ids=["one", "two"])
            def number(request):
                return request.param


            class TestTwo:
                __backend__ = True
                backend = None

                def test_c(self):
                    record(f"c on {self.backend}")

                @pytest.mark.parametrize("x", [1, 2, pytest.param(3, id="three")])
                @pytest.mark.parametrize("y", ["a", "b"], ids=["A", "B"])
                def test_d(self, x, y):
                    record(f"d {x} {y} on {self.backend}")

                def test_e(self, number):
                    record(f"e {number}")

                @pytest.mark.skip(reason="method")
                def test_f(self):
                    pass


            @pytest.mark.skip(reason="class")
            class TestSkipped:
                __backend__ = True

                def test_g(self):
                    pass

                @pytest.mark.parametrize("x", [1, 2])
                def test_h(self, x):
                    pass
            """,
        },
    )
    _same_backend_run(
        tmp_path,
        {"pass": 9, "skip": 4},
        "d 3 b on sqlite",
        "test_backends.py::TestTwo_sqlite::test_d[B-three]",
    )


def test_a_mark_a_hook_gives_a_class_it_built_selects_its_tests_with_m_and_k(tmp_path: Path) -> None:
    """SQLAlchemy 2.1.9's testing plugin marks each ``__backend__`` class ``backend`` with ``add_marker``, the
    class's node and the ``pytest.Class`` it builds per backend before collecting it, and its tox.ini's
    backend-only run is ``-m backend``: pytest runs 260 of test/sql/test_resultset.py's 300 tests, rt ran
    none (the tests of a class a hook built took the marks of the class, not those of its node). pytest 9.2:
    ``-m backend`` 2 passed, ``-m "not backend"`` 2 passed, ``-k`` matches the mark too; the same node ids."""
    hooks = _BACKEND_SUBCLASSES.replace(
        "        built = pytest.Class.from_parent(name=name, parent=module)\n",
        '        node.add_marker("backend")\n'
        "        built = pytest.Class.from_parent(name=name, parent=module)\n"
        '        built.add_marker("backend")\n',
    )
    assert hooks != _BACKEND_SUBCLASSES
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\nmarkers = backend\n",
            "conftest.py": _conftest(hooks),
            "test_results.py": _ONE_PLAIN_ONE_BACKEND_CLASS,
        },
    )
    for args, counts in (
        (("-m", "backend"), {"pass": 2}),
        (("-m", "not backend"), {"pass": 2}),
        (("-k", "backend and not test_d"), {"pass": 1}),
    ):
        (pytest_counts, pytest_log), (rt_counts, rt_log, output) = _both(tmp_path, "-p", "no:randomly", *args)
        assert pytest_counts == counts, args
        assert rt_counts == counts, (args, output)
        assert rt_log == pytest_log, (args, output)
        pytest_ids, rt_ids = _collected(tmp_path, "-p", "no:randomly", *args)
        assert rt_ids == pytest_ids, args


def test_marks_a_hook_gives_a_class_it_built_after_collecting_it_apply_to_its_tests(tmp_path: Path) -> None:
    """The same hook marking the ``pytest.Class`` it built after its ``collect()``: pytest's items are that
    node's children and read its marks when asked (``item.iter_markers()``), so an ``xfail`` mark makes them
    xpassed, ``-m`` selects them by a mark and a ``pytest_runtest_setup`` hook finds it with
    ``get_closest_marker``. rt saw none of them (its tests' parent was a class node of its own): 4 passed,
    and ``-m backend`` ran nothing. pytest 9.2: 2 passed, 2 xpassed, the same log; ``-m backend``: 2 xpassed."""
    hooks = _BACKEND_SUBCLASSES.replace(
        "            by_name.setdefault(made.name, []).append(made)\n",
        "            by_name.setdefault(made.name, []).append(made)\n"
        '        built.add_marker("backend")\n'
        '        built.add_marker(pytest.mark.xfail(reason="not on this backend"))\n',
    )
    assert hooks != _BACKEND_SUBCLASSES
    hooks += """

def pytest_runtest_setup(item):
    record(f"{item.name}: {item.get_closest_marker('backend') is not None} under {item.parent.name}")
"""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\nmarkers = backend\n",
            "conftest.py": _conftest(hooks),
            "test_results.py": _ONE_PLAIN_ONE_BACKEND_CLASS,
        },
    )
    for args, counts in (((), {"pass": 2, "xpass": 2}), (("-m", "backend"), {"xpass": 2})):
        (pytest_counts, pytest_log), (rt_counts, rt_log, output) = _both(tmp_path, "-p", "no:randomly", *args)
        assert pytest_counts == counts, args
        assert "test_c: True under TestTwo_sqlite" in pytest_log
        assert rt_counts == counts, (args, output)
        assert rt_log == pytest_log, (args, output)


def test_a_mark_a_hook_gives_the_class_it_built_of_the_same_name_selects_its_tests(tmp_path: Path) -> None:
    """A ``pytest_pycollect_makeitem`` hook answers for a test class with pytest's ``Class`` of the same name
    and object, marked ``early`` before its collection: rt took the class as its own and dropped the node with
    its mark, so ``-m early`` ran nothing (2 filtered out). pytest 9.2: ``-m early`` 1 passed, 1 failed;
    ``-m "not early"`` 1 passed."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\nmarkers = early\n",
            "conftest.py": textwrap.dedent(
                """
                import pytest


                def pytest_pycollect_makeitem(collector, name, obj):
                    if name == "TestK":
                        built = pytest.Class.from_parent(collector, name=name, obj=obj)
                        built.add_marker(pytest.mark.early)
                        return [built]
                """
            ),
            "test_a.py": textwrap.dedent(
                """
                class TestK:
                    def test_m(self):
                        pass

                    def test_n(self):
                        assert 0


                def test_plain():
                    pass
                """
            ),
        },
    )
    for args, counts in ((("-m", "early"), {"pass": 1, "fail": 1}), (("-m", "not early"), {"pass": 1})):
        (pytest_counts, _), (rt_counts, _, output) = _both(tmp_path, "-p", "no:randomly", *args)
        assert pytest_counts == counts, args
        assert rt_counts == counts, (args, output)


#: ``rt test`` in this process with each walk for marks above a test counted (printed as ``WALKS=N``)
_COUNT_WALKS = """
import sys

from rt_testrunner import pynodes
from rt.cli import main

walks = [0]
walk = pynodes.marks_added_above


def counted(node):
    walks[0] += 1
    return walk(node)


pynodes.marks_added_above = counted
status = main(["test", *sys.argv[1:]])
print(f"WALKS={walks[0]}")
sys.exit(status)
"""


def test_a_late_mark_on_a_hook_built_class_leaves_the_other_tests_marks_their_own(tmp_path: Path) -> None:
    """Once a hook's ``pytest.Class`` took its marks, every test of the process looked for marks above it,
    for each ``iter_markers()`` (-m, skip and xfail checks, keywords): 200 plain tests beside the hook's class
    walked their parents about 18 times each (2,000 of them: 36,005 walks, 1.5 s under cProfile). Only the
    tests below such a node walk now; the late mark still selects the hook's test as pytest's ``-m`` does."""
    hooks = _BACKEND_SUBCLASSES.replace(
        "            by_name.setdefault(made.name, []).append(made)\n",
        "            by_name.setdefault(made.name, []).append(made)\n        built.add_marker('late')\n",
    )
    assert hooks != _BACKEND_SUBCLASSES
    plain = "".join(f"def test_{i}():\n    pass\n" for i in range(200))
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\nmarkers = late\n",
            "conftest.py": _conftest(hooks),
            "test_results.py": _ONE_PLAIN_ONE_BACKEND_CLASS,
            "test_plain.py": plain,
            "count_walks.py": _COUNT_WALKS,
        },
    )
    for args in (("-m", "late"), ("-m", "not late")):
        (pytest_counts, _), (rt_counts, _, output) = _both(tmp_path, "-p", "no:randomly", *args)
        assert rt_counts == pytest_counts, (args, output)
    counted = subprocess.run(
        [sys.executable, "count_walks.py", "-p", "no:randomly"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    walks = [int(line[6:]) for line in counted.stdout.splitlines() if line.startswith("WALKS=")]
    assert walks, counted.stdout + counted.stderr
    assert summary_counts(counted.stderr) == {"pass": 204}, counted.stdout + counted.stderr
    assert walks[0] < 100, walks  # the hook's class's two tests, a few looks each; not 200 tests' worth


def _same_backend_run(root: Path, counts: dict[str, int], event: str, nodeid: str) -> None:
    """pytest's run of ``root`` gives ``counts``, logs ``event`` and collects ``nodeid``; rt's gives the same
    counts, log and node ids."""
    (pytest_counts, pytest_log), (rt_counts, rt_log, output) = _both(root, "-p", "no:randomly")
    assert pytest_counts == counts
    assert rt_counts == pytest_counts, output
    assert event in pytest_log
    assert rt_log == pytest_log, output
    pytest_ids, rt_ids = _collected(root, "-p", "no:randomly")
    assert nodeid in pytest_ids
    assert rt_ids == pytest_ids


#: six modules whose ``serial`` tests a conftest.py hook moves after every other test of the session; each test
#: logs its worker (rt's) and node id, and the module fixture its set-up and teardown
_SERIAL_LAST = {
    "pytest.ini": "[pytest]\nmarkers = serial\n",
    "conftest.py": """
    import os
    import time

    import pytest

    LOG = os.path.join(os.path.dirname(__file__), "events.log")


    def record(event):
        worker = os.environ.get("RT_TEST_WORKER", "-")  # not pytest-xdist's: this suite may run under it
        with open(LOG, "a") as log:
            log.write(f"{worker} {event}\\n")


    def pytest_collection_modifyitems(items):
        items.sort(key=lambda item: item.get_closest_marker("serial") is not None)


    @pytest.fixture(scope="module")
    def mod(request):
        record(f"set up {request.module.__name__}")
        yield
        record(f"tear down {request.module.__name__}")


    @pytest.fixture(autouse=True)
    def each(request, mod):
        record(request.node.nodeid)
        if os.environ.get("RT_TEST_WORKER"):
            time.sleep(0.2)  # long enough under --parallel for the second worker to start and take a share
    """,
    **{
        f"test_{name}.py": f"""
        import pytest


        @pytest.mark.serial
        def test_{name}_serial():
            pass


        def test_{name}1():
            pass


        def test_{name}2():
            pass


        class TestK:
            def test_k1(self):
                pass

            @pytest.mark.serial
            def test_k2(self):
                pass
        """
        for name in "abcdef"
    },
}


def _by_worker(log: str) -> dict[str, list[str]]:
    """Each worker's lines of events.log, in its order (``-``: one process)."""
    lines: dict[str, list[str]] = {}
    for line in log.splitlines():
        worker, _, event = line.partition(" ")
        lines.setdefault(worker, []).append(event)
    return lines


def test_parallel_workers_run_their_share_in_the_order_a_hook_set_across_files(tmp_path: Path) -> None:
    """A conftest.py hook moves the ``serial`` tests after every other test of the session. pytest-xdist's
    workers run their share of ``session.items`` in that order (``-n 2``: no ``serial`` test before the last
    plain one, in either worker), and a module's fixture is set up again when a worker comes back to it. rt's
    ``--parallel`` workers ran each file whole, in the files' order (a module's ``serial`` tests, then the next
    module's plain ones). pytest 9.2: 30 passed; each rt worker's tests now in the one-process order, every
    plain test before every ``serial`` one, each module's fixture set up around its own turn."""
    write_files(tmp_path, _SERIAL_LAST)
    (pytest_counts, pytest_log), (one_counts, one_log, output) = _both(tmp_path, "-p", "no:randomly")
    assert pytest_counts == {"pass": 30}
    assert one_counts == pytest_counts, output
    assert one_log == pytest_log, output
    order = [event for event in _by_worker(pytest_log)["-"] if "::" in event]
    assert order[-1] == "test_f.py::TestK::test_k2"
    log = tmp_path / "events.log"
    log.unlink()
    by_rt = run_cli("test", "--parallel=2", "-p", "no:randomly", cwd=tmp_path, timeout=180)
    assert summary_counts(by_rt.stderr) == pytest_counts, by_rt.output
    workers = _by_worker(log.read_text())
    assert len(workers) == 2, workers  # both workers ran tests
    ran: list[str] = []
    for events in workers.values():
        tests = [event for event in events if "::" in event]
        assert tests == sorted(tests, key=order.index), events  # the session's order within the worker
        ran += tests
        for index, event in enumerate(events):  # each test inside its module's set-up and teardown
            if "::" in event:
                module = event.partition(".py")[0]
                opened = [e for e in events[:index] if e.endswith(f" {module}")]
                assert opened and opened[-1] == f"set up {module}", events
    assert sorted(ran) == sorted(order)


def test_rerun_each_follows_the_order_a_hook_set_across_files(tmp_path: Path) -> None:
    """``--rerun-each N`` runs each turn of the session's order N times before the next, as it runs a file N
    times: with the hook moving the ``serial`` tests last, every plain test (twice) before every ``serial``
    one. rt ran each file whole, its reruns with it, in the files' order. pytest 9.2 (one run): 30 passed."""
    write_files(tmp_path, _SERIAL_LAST)
    by_pytest = run_pytest("-p", "no:randomly", cwd=tmp_path, timeout=180)
    assert counts_from_pytest(by_pytest.stdout) == {"pass": 30}
    log = tmp_path / "events.log"
    order = [event for event in _by_worker(log.read_text())["-"] if "::" in event]
    log.unlink()
    by_rt = run_cli("test", "--rerun-each", "2", "-p", "no:randomly", cwd=tmp_path, timeout=180)
    assert summary_counts(by_rt.stderr) == {"pass": 60}, by_rt.output
    ran = [event for event in _by_worker(log.read_text())["-"] if "::" in event]
    assert list(dict.fromkeys(ran)) == order, ran
    assert all(ran.count(nodeid) == 2 for nodeid in order)


def test_a_class_fixture_is_torn_down_in_the_last_test_of_its_class_before_a_teardown_wrapper_goes_on(
    tmp_path: Path,
) -> None:
    """pytest tears a class's fixtures down in the teardown phase of its last test (``teardown_exact(
    nextitem)``), so a ``pytest_runtest_teardown`` wrapper's code after its ``yield`` runs after them.
    SQLAlchemy 2.1.9's testing plugin drops the class's tables in a class fixture and ends the class's
    database work in such a wrapper: rt tore the fixture down later, with the class, and its ``DROP TABLE``
    failed (test/dialect/sqlite/test_reflection.py: 2 errors where pytest has none). pytest 9.2: 3 passed,
    each class's fixture torn down before the wrapper says the class ended."""
    write_files(
        tmp_path,
        {
            "conftest.py": _conftest(
                """

                @pytest.fixture(scope="class", autouse=True)
                def per_class(request):
                    yield
                    record(f"fixture of {request.cls.__name__} torn down")


                @pytest.hookimpl(hookwrapper=True)
                def pytest_runtest_teardown(item, nextitem):
                    yield
                    if nextitem is None or nextitem.getparent(pytest.Class) is not item.getparent(pytest.Class):
                        record(f"after the teardown of {item.name}, the last of {item.cls.__name__}")
                """
            ),
            "test_classes.py": _TWO_CLASSES,
        },
    )
    (pytest_counts, pytest_log), (rt_counts, rt_log, output) = _both(tmp_path, "-p", "no:randomly")
    assert pytest_counts == {"pass": 3}
    assert rt_counts == pytest_counts, output
    assert pytest_log.startswith("fixture of TestOne torn down\nafter the teardown of test_b"), pytest_log
    assert rt_log == pytest_log, output
