"""The cost of rewriting ``assert`` statements: rt's rewriter against pytest's, on the same big test file, same run.

Two numbers per rewriter, each the best of ``--repeat`` rounds:
- rewrite: parse + rewrite + compile of a generated file of ``--asserts`` asserts in every form pytest's rewriter
  handles (names, attributes, calls, comparisons and chains, ``and``/``or``, ``not``, binary operators, starred
  and keyword arguments, walrus, messages). This is what loading a test file costs when its cache is cold.
- run: calling every test function of the rewritten file 20 times (every assert passes), against the same
  file compiled unrewritten.

    uv run python -P bench/assert_rewrite.py [--asserts 3000] [--repeat 5]

Ratios are printed against pytest's rewriter measured in the same run; the machine may be loaded, so compare
ratios, not absolute times.
"""

from __future__ import annotations

import argparse
import ast
import time
from pathlib import Path
from typing import Any

FORMS = [
    "assert x == 1",
    "assert obj.attr == 2",
    "assert f(x) == 2",
    "assert obj.method(x, *args, key=x, **kw) == 2",
    "assert 0 < x < 2 <= obj.attr",
    "assert x == 1 and obj.attr == 2 or not f(x)",
    "assert not (x + 1 == 3)",
    "assert -x < x * 2 - 1",
    "assert (y := f(x)) == 2",
    "assert x in items, 'x is missing from %s' % items",
    "assert items[0] == 1",
    "assert len(items) == 3 and all(i > 0 for i in items)",
]

PRELUDE = """\
class Obj:
    attr = 2
    def method(self, *args, **kw):
        return 2

def f(value):
    return value + 1

"""


LOOPS = 20


def make_source(count: int) -> str:
    """Test functions of one round of the forms each, as a test file holds many small tests."""
    body: list[str] = []
    for index in range(count):
        if index % len(FORMS) == 0:
            body += [f"def test_{index}():", "    x = 1", "    obj = Obj()", "    args = ()", "    kw = {}"]
            body += ["    items = [1, 2, 3]"]
        body.append(f"    {FORMS[index % len(FORMS)]}")
    return PRELUDE + "\n".join(body) + "\n"


def rt_rewrite(source: str, filename: str) -> Any:
    """What rt_testrunner.rewrite.compile_test_file does on a cold cache (the garbage collector paused)."""
    import gc

    from rt_testrunner.rewrite import rewrite_tree

    gc.disable()
    try:
        return compile(rewrite_tree(ast.parse(source, filename), source), filename, "exec", dont_inherit=True)
    finally:
        gc.enable()


def pytest_rewrite(source: str, filename: str) -> Any:
    from _pytest.assertion.rewrite import rewrite_asserts

    tree = ast.parse(source, filename)
    rewrite_asserts(tree, source.encode(), filename)
    return compile(tree, filename, "exec", dont_inherit=True)


def plain(source: str, filename: str) -> Any:
    return compile(source, filename, "exec", dont_inherit=True)


def best(repeat: int, work: Any) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--asserts", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    source = make_source(options.asserts)
    filename = str(Path("bench_asserts_test.py").resolve())
    import _pytest.assertion.rewrite as pytest_module

    import rt_testrunner.rewrite as rt_module

    rows: dict[str, tuple[float, float]] = {}
    for name, rewrite, namespace in (
        ("plain compile", plain, {}),
        ("pytest", pytest_rewrite, {"@pytest_ar": pytest_module}),
        ("rt", rt_rewrite, rt_module.namespace_entries()),
    ):
        code = rewrite(source, filename)
        compile_time = best(options.repeat, lambda rewrite=rewrite: rewrite(source, filename))

        scope = {"__name__": "bench_asserts_test", **namespace}
        exec(code, scope)  # noqa: S102 - the generated test file
        tests = [test for name, test in scope.items() if name.startswith("test_")]

        def run(tests: list[Any] = tests) -> None:
            for _ in range(LOOPS):
                for test in tests:
                    test()

        rows[name] = (compile_time, best(options.repeat, run))
    base_compile, base_run = rows["pytest"]
    print(f"{options.asserts} asserts, best of {options.repeat}")
    print(f"{'':14} {'rewrite+compile':>16} {'vs pytest':>10} {'run':>10} {'vs pytest':>10}")
    for name, (compile_time, run_time) in rows.items():
        print(
            f"{name:14} {compile_time * 1000:13.1f} ms {compile_time / base_compile:9.2f}x"
            f" {run_time * 1000:7.2f} ms {run_time / base_run:9.2f}x"
        )


if __name__ == "__main__":
    main()
