"""The declaration API (test/describe/hooks), ``each`` names, the assert rewrite and discovery, in-process."""

from __future__ import annotations

from pathlib import Path

import pytest

import rt
from rt_testrunner import api
from rt_testrunner.discovery import discover, parse_shard, shard
from rt_testrunner.model import Suite
from rt_testrunner.naming import format_case_name
from rt_testrunner.rewrite import load_test_module


def collect(body) -> Suite:  # type: ignore[no-untyped-def]
    root = Suite(None)
    with api.collecting_into(root):
        body()
    return root


def test_every_shape_of_test() -> None:
    def body() -> None:
        api.test("plain", lambda: None)
        api.test("dict options", {"retry": 3}, lambda: None)

        @api.test("decorated", retry=1, timeout=250)
        def _() -> None: ...

        api.it("alias", lambda: None)
        api.test.concurrent("c", lambda: None)
        api.test.serial.failing("sf", lambda: None)
        api.test.failing.each([1, 2])("each %d", lambda n: None)
        api.test.todo("todo alone")
        api.test.skip.only("so", lambda: None)

    tests = collect(body).tests()
    assert [t.name for t in tests] == [
        "plain",
        "dict options",
        "decorated",
        "alias",
        "c",
        "sf",
        "each 1",
        "each 2",
        "todo alone",
        "so",
    ]
    assert tests[1].retry == 3
    assert (tests[2].retry, tests[2].timeout) == (1, 250)
    assert tests[4].flags == {"concurrent"}
    assert tests[5].flags == {"serial", "failing"}
    assert tests[6].args == (1,) and tests[7].flags == {"failing"}
    assert tests[8].fn is None and tests[8].flags == {"todo"}
    assert tests[9].flags == {"skip", "only"}


def test_bad_declarations_are_clear_errors() -> None:
    with pytest.raises(TypeError, match="test name must be a string"):
        collect(lambda: api.test(lambda: None))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="unknown test option"):
        collect(lambda: api.test("x", {"retries": 1}, lambda: None))
    with pytest.raises(ValueError, match="retry must be"):
        collect(lambda: api.test("x", lambda: None, retry=-1))
    with pytest.raises(TypeError, match="expected a function"):
        collect(lambda: api.test("x", 5))
    with pytest.raises(ValueError, match="retry must be"):
        collect(lambda: api.test("x", lambda: None, retry=True))
    with pytest.raises(ValueError, match="timeout must be"):
        collect(lambda: api.test("x", lambda: None, timeout=0))


def test_sub_millisecond_timeouts_stay_positive() -> None:
    from datetime import timedelta

    def body() -> None:
        api.test("half", lambda: None, timeout=0.4)
        api.test("delta", lambda: None, timeout=timedelta(microseconds=300))
        api.test("rounded", lambda: None, timeout=1500.6)

    assert [t.timeout for t in collect(body).tests()] == [1, 1, 1501]


def test_describe_forms_nest_and_inherit_flags() -> None:
    def body() -> None:
        api.describe("call", lambda: api.test("a", lambda: None))

        @api.describe("decorator")
        def _() -> None:
            api.test("b", lambda: None)

        with api.describe.skip("with"), api.describe("inner"):
            api.test("c", lambda: None)
            api.before_each(lambda: None)

        api.describe.each([{"k": "v"}])("each $k", lambda row: api.test("d", lambda: None))

    root = collect(body)
    tests = root.tests()
    assert [t.path for t in tests] == [
        ("call", "a"),
        ("decorator", "b"),
        ("with", "inner", "c"),
        ("each v", "d"),
    ]
    assert tests[2].has("skip") and not tests[0].has("skip")
    inner = root.children[2].children[0]  # type: ignore[union-attr]
    assert isinstance(inner, Suite) and len(inner.hooks["before_each"]) == 1


def test_hooks_register_on_the_current_suite() -> None:
    def body() -> None:
        for hook in (api.before_all, api.before_each, api.after_each, api.after_all):
            hook(lambda: None)

    root = collect(body)
    assert {kind: len(hooks) for kind, hooks in root.hooks.items()} == {
        "before_all": 1,
        "before_each": 1,
        "after_each": 1,
        "after_all": 1,
    }
    with pytest.raises(TypeError, match="expects a function"):
        collect(lambda: api.before_all(3))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("template", "row", "index", "expected"),
    [
        ("%d and %i", (1.5, 2.7), 0, "1.5 and 2"),
        ("%f", (2.25,), 0, "2.25"),
        ("%s|%o|%j", ("x", {"a": 1}, [1]), 0, 'x|{"a": 1}|[1]'),
        ("%p", ({"a": 1},), 0, "{'a': 1}"),
        ("case %# is 100%%", (5,), 3, "case 3 is 100%"),
        ("$name is $age", {"name": "ann", "age": 3}, 0, "ann is 3"),
        ("$a.b", {"a": {"b": "deep"}}, 0, "deep"),
        ("%d", ("x",), 0, "NaN"),
        ("%s %s", ("only",), 0, "only %s"),
    ],
)
def test_each_name_formats(template: str, row: object, index: int, expected: str) -> None:
    assert format_case_name(template, row, index) == expected


def test_rt_test_module_forwards_to_the_plugin(rt_kernel: object) -> None:
    from rt.test import describe, expect, test

    assert test is api.test and describe is api.describe and expect is api.expect
    assert {
        "test",
        "it",
        "describe",
        "expect",
        "mock",
        "spy_on",
        "before_all",
        "before_each",
        "after_each",
        "after_all",
    } <= set(dir(rt.test))


def test_assert_rewrite_reports_operands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "r_test.py"
    source.write_text(
        "def check(items, limit):\n"
        "    assert len(items) < limit, 'too many'\n"
        "def check_bool(a, b):\n"
        "    assert a and b\n"
        "def check_not(a):\n"
        "    assert not a\n"
        "def check_call(x):\n"
        "    assert isinstance(x, int)\n"
        "def check_chain(a, b, c):\n"
        "    assert a < b < c\n"
        "def check_eq(a, b):\n"
        "    assert a == b\n"
    )
    module = load_test_module(source, "r_test.py")
    module.check([1], 5)
    with pytest.raises(AssertionError) as info:
        module.check([1, 2, 3], 2)
    # pytest's wording: the values in place of the names, a where line for the call, the message first
    assert str(info.value) == "too many\nassert 3 < 2\n +  where 3 = len([1, 2, 3])"
    with pytest.raises(AssertionError) as boolean:
        module.check_bool(1, 0)
    assert str(boolean.value) == "assert (1 and 0)"
    with pytest.raises(AssertionError) as negated:
        module.check_not("x")
    assert str(negated.value) == "assert not 'x'"
    with pytest.raises(AssertionError) as called:
        module.check_call("no")
    assert str(called.value) == "assert False\n +  where False = isinstance('no', int)"
    with pytest.raises(AssertionError) as chained:
        module.check_chain(2, 1, 3)
    assert str(chained.value) == "assert 2 < 1"  # the first comparison of the chain that failed
    # pytest's default verbosity: the first difference and a hint; on CI (``CI`` or ``BUILD_NUMBER``) the full diff
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("BUILD_NUMBER", raising=False)
    with pytest.raises(AssertionError, match=r"At index 2 diff: 4 != 3\n  Use -v to get more diff$"):
        module.check_eq([1, 2, 4], [1, 2, 3])
    monkeypatch.setenv("CI", "true")
    with pytest.raises(
        AssertionError,
        match=r"(?s)At index 2 diff: 4 != 3\n  \n  Full diff:.*\n  -     3,\n.*\n  \+     4,",
    ):
        module.check_eq([1, 2, 4], [1, 2, 3])


def test_discovery_and_shards(tmp_path: Path) -> None:
    for name in (
        "a.test.py",
        "b_test.py",
        "c.spec.py",
        "d_spec.py",
        "e.py",
        "test_f.py",
        "sub/g.test.py",
        "node_modules/h.test.py",
        ".git/i.test.py",
        "__pycache__/j.test.py",
        "env/k.test.py",
    ):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    (tmp_path / "env" / "pyvenv.cfg").write_text("")
    found = [f.relative for f in discover(tmp_path, [])]
    # test_f.py: pytest's default pattern, next to the spec's four
    assert found == ["a.test.py", "b_test.py", "c.spec.py", "d_spec.py", "sub/g.test.py", "test_f.py"]
    assert [f.relative for f in discover(tmp_path, ["sub"])] == ["sub/g.test.py"]
    parts = [[f.relative for f in shard(discover(tmp_path, []), k, 2)] for k in (1, 2)]
    assert sorted(parts[0] + parts[1]) == found and not set(parts[0]) & set(parts[1])
    assert parse_shard("2/5") == (2, 5)
    for bad in ("0/2", "3/2", "1/0", "a/b", "1"):
        with pytest.raises(ValueError, match="Invalid shard"):
            parse_shard(bad)


def test_files_whose_names_clean_alike_get_distinct_modules(tmp_path: Path) -> None:
    import sys

    dotted, underscored = tmp_path / "a.test.py", tmp_path / "a_test.py"
    dotted.write_text("WHO = 'dotted'\n")
    underscored.write_text("WHO = 'underscored'\n")
    first = load_test_module(dotted, "a.test.py")
    second = load_test_module(underscored, "a_test.py")
    try:
        assert first.__name__ != second.__name__
        assert (
            sys.modules[first.__name__].WHO == "dotted" and sys.modules[second.__name__].WHO == "underscored"
        )
        assert load_test_module(dotted, "a.test.py").__name__ == first.__name__  # a rerun keeps its name
    finally:
        sys.modules.pop(first.__name__, None)
        sys.modules.pop(second.__name__, None)
