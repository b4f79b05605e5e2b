"""Load a test file as a module, with its ``assert`` statements rewritten to report the values involved.

A small AST rewrite written here instead of pytest's ``_pytest.assertion.rewrite``: importing that module pulls
in most of pytest (about 100 ms measured with ``-X importtime``), which alone would blow the start-up target of
``rt test``. This one captures the operands of a comparison, a boolean operation, ``not`` or a call into
temporaries (named ``@py_rt_N``, which no Python source can spell; the ``@py`` prefix of pytest's own
temporaries, by which libraries tell rewritten code from the source, e.g. ``executing``'s
``is_rewritten_by_pytest``, which icecream and stack_data rely on to map bytecode back to the source) and, only when the assert fails, builds a
message with the source text, each operand's value and, for ``==``, a diff.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import marshal
import os
import struct
import sys
import types
import zlib
from pathlib import Path
from typing import Any

from rt_testrunner.explain import compare

_HELPER = "@py_rt_assert_failed"
_UNSET = "@py_rt_unset"


class _Unset:
    def __repr__(self) -> str:
        return "<not evaluated>"


UNSET = _Unset()
_OPS = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.In: "in",
    ast.NotIn: "not in",
}


def _is_literal(source: str) -> bool:
    """A literal's value says nothing its source does not (pytest shows no ``where`` line for it)."""
    try:
        ast.literal_eval(source)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return True


def assert_failed(
    source: str,
    labels: tuple[str, ...],
    values: tuple[Any, ...],
    op: str | None,
    message: Any = None,
    parts: tuple[tuple[str | None, Any, Any, Any], ...] = (),
) -> AssertionError:
    """Build the AssertionError raised by a rewritten ``assert`` (called only on failure). ``parts`` are the
    comparisons inside an ``and``/``or`` (operator, left, right, result): each that ran and failed is
    explained as a comparison of its own, as pytest explains them."""
    lines = [f"assert {source}"]
    shown: list[tuple[str, Any]] = []
    seen: set[tuple[str, int]] = set()
    for label, value in zip(labels, values, strict=True):
        if value is UNSET or not label or _is_literal(label) or (label, id(value)) in seen:
            continue
        seen.add((label, id(value)))
        shown.append((label, value))
    for index, (label, value) in enumerate(shown):
        lead = " + where" if index == 0 else " +   and"
        text = repr(value)
        if len(text) > 240:
            text = text[:237] + "..."
        lines.append(f"{lead} {label} = {text}" if label != text else f"{lead} {text}")
    if len(values) == 2 and not any(v is UNSET for v in values) and not parts:
        explanation = _explain(op, *values)
        if explanation:
            lines.append("")
            lines.extend(explanation)
    for part_op, left, right, result in parts:
        if result is UNSET or result or left is UNSET or right is UNSET:
            continue  # not reached (short-circuited), or it held: another operand failed
        explanation = _explain(part_op, left, right)
        if explanation:
            lines.append("")
            lines.extend(explanation)
    text = "\n".join(lines)
    if message is not None:
        text = f"{message}\n{text}"
    return AssertionError(text)


def _explain(op: str | None, left: Any, right: Any) -> list[str]:
    """The lines explaining a failed comparison: the first non-empty answer of the suite's
    ``pytest_assertrepr_compare(config, op, left, right)`` hooks (its conftest.py files' and plugins', called
    in pluggy's order, as pytest calls them for each failed comparison of a rewritten assert), else rt's own
    (:func:`rt_testrunner.explain.compare`, which is what pytest's own implementation of the hook answers)."""
    pyruntest = sys.modules.get("rt_testrunner.pyruntest")
    item = pyruntest.RUNNING.get() if pyruntest is not None else None
    if item is not None and op is not None:
        hooks = item.session.hooks_for("pytest_assertrepr_compare", item.file)
        if hooks:
            from rt_testrunner import pyplugins

            available = {"config": item.session.config, "op": op, "left": left, "right": right}
            for answer in pyplugins.call("pytest_assertrepr_compare", hooks, available):
                if answer:
                    # one line per item, as pytest shows them: a newline inside one is written as \n
                    return [str(line).replace("\n", "\\n") for line in answer]
    return compare(op, left, right)


def _locate(new: ast.AST, origin: ast.AST) -> None:
    """Give the nodes created for one assert the assert's position. ``ast.fix_missing_locations`` would do it
    but walks the whole module, which measured as the largest cost of loading a file with many asserts."""
    for child in ast.walk(new):
        if "lineno" in child._attributes and not hasattr(child, "lineno"):
            ast.copy_location(child, origin)
        elif "lineno" in child._attributes and getattr(child, "end_lineno", None) is None:
            child.end_lineno, child.end_col_offset = origin.end_lineno, origin.end_col_offset  # type: ignore[attr-defined]


class _AssertRewriter(ast.NodeTransformer):
    def __init__(self, source: str, keep_messages: bool = False) -> None:
        self.lines = source.splitlines(keepends=True)
        self.counter = 0
        #: a helper module's ``assert x, "message"`` stays plain (see :func:`compile_test_file`)
        self.keep_messages = keep_messages

    def segment(self, node: ast.expr) -> str:
        """The source text of ``node``. ``ast.get_source_segment`` re-splits the whole file on every call,
        which made rewriting a 100-assert file quadratic; the lines are split once here."""
        end_line, end_col = node.end_lineno, node.end_col_offset
        if end_line is None or end_col is None:
            return ast.unparse(node)
        first, last = node.lineno - 1, end_line - 1
        if first == last:
            text = self.lines[first].encode()[node.col_offset : end_col].decode()
        else:
            parts = [
                self.lines[first].encode()[node.col_offset :].decode(),
                *self.lines[first + 1 : last],
                self.lines[last].encode()[:end_col].decode(),
            ]
            text = "".join(parts)
        return text if text.strip() else ast.unparse(node)

    def _temp(self, node: ast.expr, labels: list[str], names: list[str], constants: bool = False) -> ast.expr:
        if isinstance(node, ast.Constant) and not constants:
            return node
        name = f"@py_rt_{self.counter}"
        self.counter += 1
        names.append(name)
        labels.append(self.segment(node))
        return ast.NamedExpr(target=ast.Name(name, ast.Store()), value=node)

    def _keep_alive(self, node: ast.expr, hidden: list[str]) -> ast.expr:
        """Hold the intermediate values of calls (their arguments and receivers) in temporaries until the
        assert is done, as pytest's rewrite does: ``hash(C(1)) != hash(C(1))`` compares two live objects."""
        if isinstance(node, ast.Call):
            node.func = self._keep_alive(node.func, hidden)
            node.args = [
                a if isinstance(a, ast.Starred) else self._hold(self._keep_alive(a, hidden), hidden)
                for a in node.args
            ]
        elif isinstance(node, ast.Attribute | ast.Subscript):
            node.value = self._hold(self._keep_alive(node.value, hidden), hidden)
        return node

    def _hold(self, node: ast.expr, hidden: list[str]) -> ast.expr:
        if not isinstance(node, ast.Call):
            return node
        name = f"@py_rt_{self.counter}"
        self.counter += 1
        hidden.append(name)
        return ast.NamedExpr(target=ast.Name(name, ast.Store()), value=node)

    def visit_Assert(self, node: ast.Assert) -> Any:
        if self.keep_messages and node.msg is not None:
            return node
        test = node.test
        labels: list[str] = []
        names: list[str] = []
        hidden: list[str] = []
        parts: list[tuple[str | None, str, str, str]] = []
        op: str | None = None
        if isinstance(test, ast.Compare):
            # one comparison: constants are kept too, for the explanation of the two sides
            single = len(test.ops) == 1
            source_text = self.segment(test)
            new_test: ast.expr = ast.Compare(
                left=self._temp(self._keep_alive(test.left, hidden), labels, names, single),
                ops=test.ops,
                comparators=[
                    self._temp(self._keep_alive(c, hidden), labels, names, single) for c in test.comparators
                ],
            )
            if len(test.ops) == 1:
                op = _OPS.get(type(test.ops[0]))
        elif isinstance(test, ast.BoolOp):
            new_values: list[ast.expr] = []
            for value in test.values:
                if isinstance(value, ast.Compare) and len(value.ops) == 1:
                    # ``a == b and c == d``: each comparison's operands are kept (and shown), and the one
                    # that failed is explained as a comparison alone would be
                    left = self._temp(self._keep_alive(value.left, hidden), labels, names, True)
                    right = self._temp(self._keep_alive(value.comparators[0], hidden), labels, names, True)
                    result = f"@py_rt_{self.counter}"
                    self.counter += 1
                    # the comparison's result: not shown (no label), only read to explain the failed one
                    parts.append((_OPS.get(type(value.ops[0])), names[-2], names[-1], result))
                    names.append(result)
                    labels.append("")
                    compared = ast.Compare(left=left, ops=value.ops, comparators=[right])
                    new_values.append(ast.NamedExpr(target=ast.Name(result, ast.Store()), value=compared))
                else:
                    new_values.append(self._temp(value, labels, names))
            new_test = ast.BoolOp(op=test.op, values=new_values)
        elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            new_test = ast.UnaryOp(op=test.op, operand=self._temp(test.operand, labels, names))
        elif isinstance(test, ast.Call):
            args = [a if isinstance(a, ast.Starred) else self._temp(a, labels, names) for a in test.args]
            call = ast.Call(func=test.func, args=args, keywords=test.keywords)
            new_test = self._temp(call, labels, names)
            # report the call's result first, then its arguments
            labels.insert(0, self.segment(test))
            labels.pop()
            names.insert(0, names.pop())
        else:
            new_test = self._temp(test, labels, names)
        source = source_text if isinstance(test, ast.Compare) else self.segment(test)
        failure = ast.Raise(
            exc=ast.Call(
                func=ast.Name(_HELPER, ast.Load()),
                args=[
                    ast.Constant(source),
                    ast.Tuple([ast.Constant(label) for label in labels], ast.Load()),
                    ast.Tuple([ast.Name(name, ast.Load()) for name in names], ast.Load()),
                    ast.Constant(op),
                    node.msg if node.msg is not None else ast.Constant(None),
                    ast.Tuple(
                        [
                            ast.Tuple(
                                [ast.Constant(part_op), *(ast.Name(n, ast.Load()) for n in part_names)],
                                ast.Load(),
                            )
                            for part_op, *part_names in parts
                        ],
                        ast.Load(),
                    ),
                ],
                keywords=[],
            ),
            cause=None,
        )
        statements: list[ast.stmt] = []
        if names:
            statements.append(
                ast.Assign(
                    targets=[ast.Name(name, ast.Store()) for name in names],
                    value=ast.Name(_UNSET, ast.Load()),
                )
            )
        statements.append(ast.If(test=ast.UnaryOp(ast.Not(), new_test), body=[failure], orelse=[]))
        if names or hidden:
            # the temporaries must not keep the values alive after the assert (a test of a weak reference or
            # of garbage collection would fail only under rt); pytest clears its own the same way
            statements.append(
                ast.Assign(
                    targets=[ast.Name(name, ast.Store()) for name in [*names, *hidden]],
                    value=ast.Constant(None),
                )
            )
        for statement in statements:
            _locate(statement, node)
        return statements


REWRITE_VERSION = 7
_CACHE_TAG = f"{sys.implementation.cache_tag}-rt-test-{REWRITE_VERSION}"


def _cache_path(path: Path, helper: bool = False) -> Path:
    tag = f"{_CACHE_TAG}-helper" if helper else _CACHE_TAG
    return path.parent / "__pycache__" / f"{path.name[:-3]}.{tag}.pyc"


def _read_cache(path: Path, stat: os.stat_result, helper: bool = False) -> types.CodeType | None:
    try:
        data = _cache_path(path, helper).read_bytes()
    except OSError:
        return None
    header = struct.pack("<qq", stat.st_mtime_ns, stat.st_size)
    if data[:16] != header:
        return None
    try:
        code = marshal.loads(data[16:])
    except (EOFError, ValueError, TypeError):
        return None
    # a tree that was moved or copied keeps its caches: code compiled for another path would put the old
    # path in every traceback and failure location, so it does not count as a hit
    return code if isinstance(code, types.CodeType) and code.co_filename == str(path) else None


def _write_cache(path: Path, stat: os.stat_result, code: types.CodeType, helper: bool = False) -> None:
    """Best effort, like Python's own .pyc files: a read-only tree just means no cache."""
    if sys.dont_write_bytecode:
        return
    target = _cache_path(path, helper)
    temporary = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    try:
        target.parent.mkdir(exist_ok=True)
        temporary.write_bytes(struct.pack("<qq", stat.st_mtime_ns, stat.st_size) + marshal.dumps(code))
        os.replace(temporary, target)
    except OSError:
        with contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)


def compile_test_file(path: Path, helper: bool = False) -> types.CodeType:
    """Compile ``path`` with rewritten asserts, through a cache in ``__pycache__`` (as pytest does) keyed on
    the file's mtime and size, the Python version and the rewriter's version.

    ``helper``: a module of the suite that is neither a test file nor a conftest.py, which pytest does not
    rewrite. Its asserts without a message are rewritten (a failure in a helper shows the values), but one
    with a message keeps it alone, as pytest leaves it: a test may compare that text
    (``str(excinfo.value) == "message"``), and code next to the tests may be the library's own."""
    stat = path.stat()
    cached = _read_cache(path, stat, helper)
    if cached is not None:
        return cached
    # decode as Python does: a PEP 263 coding line or a BOM is honoured, universal newlines
    source = importlib.util.decode_source(path.read_bytes())
    filename = str(path)
    tree = ast.parse(source, filename)
    if "assert" in source:
        tree = _AssertRewriter(source, keep_messages=helper).visit(tree)
    code = compile(tree, filename, "exec", dont_inherit=True)
    _write_cache(path, stat, code, helper)
    return code


def module_name_for(relative: str) -> str:
    stem = relative.removesuffix(".py")
    cleaned = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in stem.replace("/", "."))
    return f"rt_test_files.{cleaned}"


def load_test_module(path: Path, relative: str) -> types.ModuleType:
    """Execute a test file as a fresh module (registered in ``sys.modules`` so dataclasses and pickling work)."""
    code = compile_test_file(path)
    name = module_name_for(relative)
    previous = sys.modules.get(name)
    if previous is not None and getattr(previous, "__file__", None) != str(path):
        # a.test.py and a_test.py clean to the same name: the second must not replace the first in
        # sys.modules (its classes would then pickle and resolve against the wrong file)
        name = f"{name}_{zlib.crc32(relative.encode()):08x}"
    module = types.ModuleType(name)
    module.__file__ = str(path)
    module.__dict__[_HELPER] = assert_failed
    module.__dict__[_UNSET] = UNSET
    sys.modules[module.__name__] = module
    exec(code, module.__dict__)  # noqa: S102 - running the user's test file is the point
    return module
