"""A failed assert's message under ``rt test`` is pytest's, character for character.

One project holds a test per form of assert (names, attributes, calls, comparisons and chains, ``and``/``or``
with short-circuits, unary and binary operators, starred and keyword arguments, walrus, messages, long and
multi-line reprs, the comparison explanations and their truncation). Each test catches its assert's
AssertionError with ``pytest.raises`` and records ``str(excinfo.value)``, as a suite that compares that text
does (pytest-mock's ``assert_called_with`` re-raises the first line of it). The project runs under pytest and
under ``rt test`` at the default verbosity, at ``-v``, at ``-vv``, on CI (``CI=1``), with the configuration's
``verbosity_assertions``, ``truncation_limit_lines`` and ``assertion_text_diff_style``, and with ``-v`` in addopts
and another ``-v`` given (in ``--parallel`` workers), and every message must match line by line; object addresses (``0x7f...``) are the only part left out of the comparison.
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest

from rt.testing import run_cli, run_pytest, write_files

#: the module the cases run in: what their names refer to
PRELUDE = '''\
import collections
import dataclasses
import json
import os
import sys

import attr
import pytest

CONSTANT = 5


def double(value):
    return value * 2


class Thing:
    value = 3

    def method(self, *args, **kwargs):
        return len(args) + len(kwargs)


class BadRepr:
    def __repr__(self):
        raise ValueError("no repr for you")


class TwoLines:
    def __repr__(self):
        return "first\\n{second}"


class Special:
    """pytest_assertrepr_compare in conftest.py explains its comparisons."""

    def __init__(self, number):
        self.number = number

    def __eq__(self, other):
        return isinstance(other, Special) and other.number == self.number


@dataclasses.dataclass
class Point:
    x: int
    y: int
    label: str = "p"


@attr.s(auto_attribs=True)
class Pair:
    left: int
    right: list


Row = collections.namedtuple("Row", "name size")


def record(name, error):
    with open(os.environ["MESSAGES_OUT"], "a", encoding="utf-8") as out:
        out.write(json.dumps({"name": name, "message": str(error)}) + "\\n")

'''

CONFTEST = """\
def pytest_assertrepr_compare(config, op, left, right):
    from test_messages import Special

    if isinstance(left, Special) and isinstance(right, Special) and op == "==":
        return ["Comparing Special instances:", f"   numbers: {left.number} != {right.number}"] + [
            f"line {n}" for n in range(12)
        ]
    return None
"""

#: name: the body of one test (its last statement is the assert that fails)
CASES: dict[str, str] = {
    "tuple_equal": "assert (1, 2) == (1, 3)",
    "local_name": "x = 1\nassert x == 2",
    "global_constant": "assert CONSTANT == 6",
    "global_function_call": "assert double(2) == 5",
    "local_function_call": "f = double\nassert f(2) == 5",
    "nested_calls": "assert double(double(1)) == 5",
    "attribute": "o = Thing()\nassert o.value == 4",
    "attribute_of_call": "assert Thing().value == 4",
    "method_call_starred_keywords": "o = Thing()\nassert o.method(1, *[2, 3], key=4, **{'z': 5}) == 0",
    "module_attribute_call": "assert os.path.isabs('relative')",
    "builtin_calls": "items = [1, 2]\nassert len(items) == 3",
    "isinstance": "x = 1\nassert isinstance(x, str)",
    "class_name": "assert Thing is int",
    "truthy_name": "x = 0\nassert x",
    "none": "assert None",
    "empty_list": "assert []",
    "subscript": "items = [1, 2]\nassert items[0] == 5",
    "generator": "items = [1, 2]\nassert all(i > 5 for i in items)",
    "lambda_local": "check = lambda v: v > 5\nassert check(1)",
    "chained_first_fails": "x = 1\nassert 2 < x < 3",
    "chained_second_fails": "x = 1\nassert 0 < x < 1",
    "chained_long": "assert 1 < 2 < 0 < 5",
    "chained_explained": "assert [1] == [1] == [2]",
    # Faker 40.63.0's test_ssn.py: a chain read again by an enclosing and/or or comparison (rt failed to load it)
    "chained_in_or": "x = 5\nassert 1 <= x <= 3 or x == 7",
    "chained_in_and": "x = 5\nassert x == 5 and 1 <= x <= 3",
    "chained_compared": "x = 5\nassert (1 <= x <= 3) == True",
    "and_short_circuit": "x = 0\nassert x and undefined_name",
    "and_second_fails": "x = 1\nassert x == 1 and double(x) == 3",
    "or_all_fail": "x = 1\nitems = [1, 2, 3]\nassert x is None or items == []",
    "or_three": "assert 0 or '' or double(0)",
    "nested_boolean": "a, b, c = 0, 1, 0\nassert (a or b) and c",
    "and_in_compare": "a = 1\nassert (a and 2) == 3",
    "not_call": "assert not double(1)",
    "not_compare": "assert not (1 == 1)",
    "unary_minus": "x = 1\nassert -x > 5",
    "unary_invert": "x = 1\nassert ~x == 0",
    "unary_plus": "x = 1\nassert +x == 2",
    "binary_add": "x = 1\nassert x + 1 == 3",
    "binary_mod": "x = 3\nassert x % 2 == 0",
    "binary_nested": "x = 2\nassert x ** 2 // 1 - double(x) == 3",
    "binary_matmul_like": "x = 6\nassert (x | 1) & 3 == 0",
    "walrus": "x = 1\nassert (y := double(x)) == 5",
    "walrus_later_operand": "x = 1\nassert x == (x := 5)",
    "walrus_in_and": "assert (n := 0) and n == 1",
    "message_string": "x = 1\nassert x == 2, 'x was %s' % x",
    "message_percent": "assert False, '100% wrong'",
    "message_lines": "assert 1 == 2, 'first\\nsecond'",
    "message_list": "assert False, ['a\\nb', 1]",
    "message_none": "assert 0, None",
    "message_dict": "assert 0, {'key': 'value'}",
    "message_call": "assert double(1) == 3, double('ab')",
    "long_list": "assert list(range(100)) == list(range(101))",
    "long_string": "assert 'a' * 300 == 'b'",
    "long_string_name": "text = 'x' * 500\nassert text == 'y'",
    "big_dict_repr": "d = {i: i for i in range(10)}\nassert d is None",
    "deep_list_repr": "deep = [[[[[[[1]]]]]]]\nassert deep is None",
    "bad_repr": "b = BadRepr()\nassert b is None",
    "two_line_repr": "t = TwoLines()\nassert t is None",
    "two_line_repr_message": "assert False, TwoLines()",
    "text_character_diff": "assert 'spam' == 'eggs'",
    "text_lines_diff": "assert 'one\\ntwo\\nthree' == 'one\\nTWO\\nthree'",
    "text_long_prefix": "assert 'a' * 60 + 'x' == 'a' * 60 + 'y'",
    "text_long_suffix": "assert 'x' + 'a' * 60 == 'y' + 'a' * 60",
    "text_prefix_shorter": "assert 'a' * 50 == 'a' * 50 + 'b'",
    "text_whitespace": "assert ' ' == '  '",
    "text_not_in": "assert 'needle' not in 'a haystack with a needle in it'",
    "text_normalized": "assert '\\u00e9' == 'e\\u0301'",
    "list_index_diff": "assert [1, 2, 3] == [1, 2, 4]",
    "list_right_longer": "assert [1] == [1, 2, 3]",
    "list_left_one_more": "assert [1, 2] == [1]",
    "tuple_of_strings": "assert ('a', 'b') == ('a', 'c')",
    "bytes_diff": "assert b'abc' == b'abd'",
    "bytes_longer": "assert b'ab' == b'abcd'",
    "set_diff": "assert {1, 2, 3} == {2, 3, 4}",
    "set_subset": "assert {1, 2} <= {1}",
    "set_not_equal": "assert {1} != {1}",
    "set_greater": "assert {1} > {1}",
    "dict_differing": "assert {'a': 1, 'b': 2} == {'a': 1, 'b': 3}",
    "dict_extra_keys": "assert {1: 'x', 2: 'y'} == {2: 'y', 3: 'z', 4: 'w'}",
    "dict_many_differing": "assert {i: i for i in range(20)} == {i: i + 1 for i in range(20)}",
    "dataclass_diff": "assert Point(1, 2) == Point(1, 3)",
    "dataclass_two_diff": "assert Point(1, 2, 'a') == Point(0, 2, 'b')",
    "attrs_diff": "assert Pair(1, [1, 2]) == Pair(1, [1, 3])",
    "namedtuple_diff": "assert Row('a', 1) == Row('a', 2)",
    "approx": "assert 0.1 + 0.2 == pytest.approx(0.4)",
    "approx_list": "assert [1.0, 2.0] == pytest.approx([1.0, 2.5])",
    "is_none": "x = 1\nassert x is None",
    "is_not": "x = None\nassert x is not None",
    "in_list": "items = [1, 2, 3]\nassert 4 in items",
    "not_in_list": "items = [1, 2, 3]\nassert 1 not in items",
    "custom_hook": "assert Special(1) == Special(2)",
    "list_equal_in_failing_and": "assert [1] == [1] and 1 == 2",
    "multiline_assert": "x = 1\nassert (\n    x\n    == 2\n)",
    "unicode_values": "word = 'caf\\u00e9'\nassert word == 'cafe'",
    "attribute_chain": "o = Thing()\no.inner = Thing()\nassert o.inner.method() == 1",
    "subscript_attribute": "things = [Thing()]\nassert things[0].value == 0",
    "display_operands": "x = 1\nassert [x, 1] == [2, 1]",
    "conditional_expression": "x = 1\nassert (x if x > 5 else 0)",
    "immediate_lambda": "assert (lambda: 0)()",
    "starred_slice": "args = (1, 2)\nassert double(*args[:1]) == 3",
    "double_negation": "x = 1\nassert not not (x - 1)",
    "dict_keyword_splat": "opts = {'value': 2}\nassert dict(**opts) == {}",
    "message_braces_and_tildes": "assert 1 == 0, 'first line\\n{braces}\\n~tilde\\n}'",
    "compare_calls_both_sides": "assert len('abc') == len('ab')",
    "boolean_of_calls": "assert double(0) or isinstance(1, str)",
    "module_attribute": "assert sys.maxsize < 0",
}


def _project_source() -> str:
    tests = []
    for name, body in CASES.items():
        tests.append(
            f"def test_{name}():\n"
            "    with pytest.raises(AssertionError) as info:\n"
            f"{textwrap.indent(body, '        ')}\n"
            f"    record({name!r}, info.value)\n"
        )
    return PRELUDE + "\n\n".join(tests)


#: the runs compared: name, extra command-line arguments, extra environment, the project's pytest.ini
VARIANTS = {
    "default": ((), {}, "[pytest]\n"),
    "verbose": (("-v",), {}, "[pytest]\n"),
    "very_verbose": (("-vv",), {}, "[pytest]\n"),
    "ci": ((), {"CI": "1"}, "[pytest]\n"),
    # the assertion verbosity alone, shorter truncation, whole texts rather than a diff
    "ini": (
        (),
        {},
        "[pytest]\nverbosity_assertions = 1\ntruncation_limit_lines = 4\nassertion_text_diff_style = block\n",
    ),
    "addopts_parallel": (("-v", "--parallel=2"), {}, "[pytest]\naddopts = -v\n"),  # -vv in all
}

_ADDRESS = re.compile(r"0x[0-9a-f]+")


def _messages(out: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in out.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        found[entry["name"]] = _ADDRESS.sub("0x…", entry["message"])
    return found


@pytest.fixture(scope="module")
def messages(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Both runners' messages per variant, each variant run once (on first use)."""
    runs: dict[str, tuple[dict[str, str], dict[str, str]]] = {}

    def get(variant: str) -> tuple[dict[str, str], dict[str, str]]:
        if variant not in runs:
            root = tmp_path_factory.mktemp(f"messages_{variant}")
            arguments, environ, ini = VARIANTS[variant]
            write_files(
                root, {"test_messages.py": _project_source(), "conftest.py": CONFTEST, "pytest.ini": ini}
            )
            results = []
            for runner in ("pytest", "rt"):
                out = root / f"{runner}.jsonl"
                env = {"MESSAGES_OUT": str(out), "PYTHONHASHSEED": "0", "BUILD_NUMBER": "", **environ}
                if runner == "pytest":
                    # --parallel is rt's own: pytest runs the same project in one process
                    run = run_pytest(*(a for a in arguments if a != "--parallel=2"), cwd=root, env=env)
                else:
                    run = run_cli("test", *arguments, cwd=root, env=env)
                assert out.exists(), run.output
                results.append(_messages(out))
                assert len(results[-1]) == len(CASES), (runner, run.output)
            runs[variant] = (results[0], results[1])
        return runs[variant]

    return get


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("case", list(CASES))
def test_message_matches_pytest(messages: Any, variant: str, case: str) -> None:
    from_pytest, from_rt = messages(variant)
    assert from_rt[case].splitlines() == from_pytest[case].splitlines()


def test_the_variants_differ(messages: Any) -> None:
    """The variants are not the same run four times: -vv shows a long repr in full, CI a full diff."""
    default, _ = messages("default")
    assert messages("very_verbose")[0]["long_string"] != default["long_string"]
    assert "Full diff:" in messages("ci")[0]["long_list"]
    assert "Full diff:" not in default["long_list"]
    # -v in addopts and -v given are pytest's -vv
    assert messages("addopts_parallel")[0]["long_string"] == messages("very_verbose")[0]["long_string"]
