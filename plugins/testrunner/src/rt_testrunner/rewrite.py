"""Load a test file as a module, with its ``assert`` statements rewritten to explain a failure as pytest does.

A rewrite written here instead of pytest's ``_pytest.assertion.rewrite``: importing that module pulls in most
of pytest (about 100 ms measured with ``-X importtime``), which alone would blow the start-up target of ``rt
test``. It follows pytest's rules, because suites read the text it produces (:mod:`rt_testrunner.assertion_text`
says how it is worded): each part of the asserted expression that pytest explains (names, attributes, calls,
comparisons, ``and``/``or``, unary and binary operators, starred and keyword arguments, walrus targets) is
evaluated into a temporary, in the order and with the short-circuits pytest's rewrite gives them (every
comparison of a chain runs, as under pytest; the operands of ``and``/``or`` after the deciding one do not).
The temporaries are named ``@py_rt_N``, which no Python source can spell, with the ``@py`` prefix of
pytest's own, by which libraries tell rewritten code from the source (``executing``'s
``is_rewritten_by_pytest``, which icecream and stack_data rely on to map bytecode back to the source).

Only when the assert fails is :func:`rt_testrunner.assertion_text.assert_failed` called, with the assert's
*plan* (a constant: nested tuples describing the expression) and the tuple of captured values. A passing
assert costs its temporaries and nothing else.
"""

from __future__ import annotations

import ast
import contextlib
import gc
import importlib.util
import marshal
import os
import struct
import sys
import types
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from rt_testrunner.assertion_text import UNSET, assert_failed
from rt_testrunner.real_os import RealOs

_HELPER = "@py_rt_assert_failed"
_UNSET = "@py_rt_unset"

__all__ = [
    "UNSET",
    "assert_failed",
    "compile_test_file",
    "load_test_module",
    "namespace_entries",
    "rewrite_tree",
]

_UNARY = {ast.Not: "not ", ast.Invert: "~", ast.USub: "-", ast.UAdd: "+"}
_SYMBOLS: dict[type[ast.AST], str] = {
    ast.BitOr: "|",
    ast.BitXor: "^",
    ast.BitAnd: "&",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
    ast.MatMult: "@",
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

Plan = tuple[Any, ...]


def namespace_entries() -> dict[str, Any]:
    """The names rewritten code reads from its module's namespace."""
    return {_HELPER: assert_failed, _UNSET: UNSET}


def _place(node: ast.AST) -> dict[str, Any]:
    return {
        "lineno": node.lineno,  # type: ignore[attr-defined]
        "col_offset": node.col_offset,  # type: ignore[attr-defined]
        "end_lineno": node.end_lineno,  # type: ignore[attr-defined]
        "end_col_offset": node.end_col_offset,  # type: ignore[attr-defined]
    }


def _walrus_targets(nodes: Iterable[ast.expr]) -> set[str]:
    return {
        sub.target.id
        for node in nodes
        for sub in ast.walk(node)
        if isinstance(sub, ast.NamedExpr) and isinstance(sub.target, ast.Name)
    }


class _AssertRewrite:
    """The statements replacing one ``assert``: the evaluation of its parts into temporaries (nested ``if``
    blocks where ``and``/``or`` short-circuit), then ``if not <test>: raise <failure>``, then the temporaries
    cleared (a test of a weak reference or of garbage collection must not see them kept alive)."""

    def __init__(self, origin: ast.Assert, walrus: bool) -> None:
        self.at = _place(origin)
        self.block: list[ast.stmt] = []
        self.temps: list[str] = []
        #: temporaries assigned inside a short-circuited block: set to UNSET first, so reading them is safe
        self.maybe_unset: list[str] = []
        #: the expressions whose values the failure reads, by index (what the plan refers to)
        self.values: list[ast.expr] = []
        self.depth = 0
        #: whether the module has any ``:=`` at all (else the walrus checks are skipped)
        self.walrus = walrus

    def name(self, name: str, store: bool = False) -> ast.Name:
        return ast.Name(name, ast.Store() if store else ast.Load(), **self.at)

    def temp(self) -> str:
        name = f"@py_rt_{len(self.temps)}"
        self.temps.append(name)
        if self.depth:
            self.maybe_unset.append(name)
        return name

    def assign(self, value: ast.expr) -> ast.Name:
        name = self.temp()
        self.block.append(ast.Assign([self.name(name, True)], value, **self.at))
        return self.name(name)

    def index(self, expression: ast.expr) -> int:
        self.values.append(expression)
        return len(self.values) - 1

    def reference(self, result: ast.expr) -> ast.expr:
        """A fresh load of a result (a name or a constant), to read it again."""
        if isinstance(result, ast.Name):
            return self.name(result.id)
        if isinstance(result, ast.Constant):
            return ast.Constant(result.value, **self.at)
        raise TypeError(f"not a stable result: {ast.dump(result)}")  # pragma: no cover - a rewrite bug

    def identity_operand(self, result: ast.expr, op: ast.cmpop) -> ast.expr:
        """An operand of the rewritten comparison: a constant compared with ``is`` or ``is not`` is read
        from a name, as pytest's rewrite holds every operand in one, so compiling the test module gives no
        ``SyntaxWarning: "is" with a literal`` that pytest does not show (azure-core 1.41.0's
        ``assert h.get("nope", default="default") is "default"``: 2 warnings more under rt)."""
        if isinstance(result, ast.Constant) and isinstance(op, ast.Is | ast.IsNot):
            return self.assign(self.reference(result))
        return self.reference(result)

    def visit(self, node: ast.expr) -> tuple[ast.expr, Plan]:
        method = _VISITORS.get(type(node))
        return method(self, node) if method is not None else self.generic(node)

    def generic(self, node: ast.expr) -> tuple[ast.expr, Plan]:
        if isinstance(node, ast.Constant):
            return node, ("r", self.index(self.reference(node)))
        result = self.assign(node)
        return result, ("r", self.index(self.reference(result)))

    def operand(self, node: ast.expr, later: list[ast.expr]) -> tuple[ast.expr, Plan]:
        """An operand evaluated before ``later``: a name that a walrus in ``later`` rebinds is copied first
        (Python reads it before the walrus runs, and so must the explanation)."""
        result, plan = self.visit(node)
        if self.walrus and isinstance(result, ast.Name) and result.id in _walrus_targets(later):
            snapshot = self.assign(self.reference(result))
            return snapshot, ("r", self.index(self.reference(snapshot)))
        return result, plan

    def visit_name(self, node: ast.Name) -> tuple[ast.expr, Plan]:
        if self.depth:  # it may not run: captured when it does
            result = self.assign(node)
            return result, ("n", node.id, self.index(self.reference(result)))
        return node, ("n", node.id, self.index(self.name(node.id)))

    def visit_named(self, node: ast.NamedExpr) -> tuple[ast.expr, Plan]:
        target = node.target.id
        if self.depth:
            name = self.temp()
            wrapped = ast.NamedExpr(self.name(name, True), node, **self.at)
            return wrapped, ("n", target, self.index(self.name(name)))
        return node, ("n", target, self.index(self.name(target)))

    def visit_attribute(self, node: ast.Attribute) -> tuple[ast.expr, Plan]:
        if not isinstance(node.ctx, ast.Load):
            return self.generic(node)
        owner, owner_plan = self.visit(node.value)
        result = self.assign(ast.Attribute(owner, node.attr, ast.Load(), **_place(node)))
        return result, ("a", self.index(self.reference(result)), owner_plan, node.attr)

    def visit_call(self, node: ast.Call) -> tuple[ast.expr, Plan]:
        operands = [*node.args, *(keyword.value for keyword in node.keywords)]
        function, function_plan = self.operand(node.func, operands)
        arguments: list[ast.expr] = []
        keywords: list[ast.keyword] = []
        parts: list[tuple[str, Plan]] = []
        for position, argument in enumerate(node.args):
            if isinstance(argument, ast.Starred):
                value, plan = self.visit(argument.value)
                arguments.append(ast.Starred(value, argument.ctx, **_place(argument)))
                parts.append(("*", plan))
            else:
                value, plan = self.operand(argument, operands[position + 1 :])
                arguments.append(value)
                parts.append(("", plan))
        for position, keyword in enumerate(node.keywords, start=len(node.args)):
            value, plan = self.operand(keyword.value, operands[position + 1 :])
            keywords.append(ast.keyword(keyword.arg, value, **_place(keyword)))
            parts.append((f"{keyword.arg}=" if keyword.arg else "**", plan))
        result = self.assign(ast.Call(function, arguments, keywords, **_place(node)))
        return result, ("c", self.index(self.reference(result)), function_plan, tuple(parts))

    def visit_unary(self, node: ast.UnaryOp) -> tuple[ast.expr, Plan]:
        operand, plan = self.visit(node.operand)
        result = self.assign(ast.UnaryOp(node.op, operand, **_place(node)))
        return result, ("u", _UNARY[type(node.op)], plan)

    def visit_binary(self, node: ast.BinOp) -> tuple[ast.expr, Plan]:
        left, left_plan = self.operand(node.left, [node.right])
        right, right_plan = self.visit(node.right)
        result = self.assign(ast.BinOp(left, node.op, right, **_place(node)))
        return result, ("b", _SYMBOLS[type(node.op)], left_plan, right_plan)

    def visit_boolean(self, node: ast.BoolOp) -> tuple[ast.expr, Plan]:
        """Each operand after the first is evaluated in an ``if`` block entered only when the one before it
        did not decide (true for ``and``, false for ``or``)."""
        is_or = isinstance(node.op, ast.Or)
        result_name = self.temp()
        outer_block, outer_depth = self.block, self.depth
        plans: list[Plan] = []
        conditions: list[int] = []
        last = len(node.values) - 1
        for position, value in enumerate(node.values):
            result, plan = self.visit(value)
            self.block.append(ast.Assign([self.name(result_name, True)], result, **self.at))
            if position < last:
                if isinstance(result, ast.NamedExpr) or (
                    self.walrus
                    and isinstance(result, ast.Name)
                    and result.id in _walrus_targets(node.values[position + 1 :])
                ):
                    # read the value it had, not the expression again (nor a later walrus's value)
                    result = self.assign(self.name(result_name))
                    plan = ("r", self.index(self.reference(result)))
                conditions.append(self.index(self.reference(result)))
                test = self.reference(result)
                if is_or:
                    test = ast.UnaryOp(ast.Not(), test, **self.at)
                inner: list[ast.stmt] = []
                self.block.append(ast.If(test, inner, [], **self.at))
                self.block = inner
                self.depth += 1
            plans.append(plan)
        self.block, self.depth = outer_block, outer_depth
        return self.name(result_name), ("o", is_or, tuple(plans), tuple(conditions))

    def visit_compare(self, node: ast.Compare) -> tuple[ast.expr, Plan]:
        left, left_plan = self.operand(node.left, node.comparators)
        if isinstance(left, ast.NamedExpr):
            left = self.assign(left)
        plans = [left_plan]
        parenthesized = [isinstance(node.left, ast.Compare | ast.BoolOp)]
        operands = [self.index(self.reference(left))]
        symbols: list[str] = []
        results: list[ast.Name] = []
        for position, (op, comparator) in enumerate(zip(node.ops, node.comparators, strict=True)):
            right, right_plan = self.operand(comparator, node.comparators[position + 1 :])
            if isinstance(right, ast.NamedExpr):
                right = self.assign(right)
            plans.append(right_plan)
            parenthesized.append(isinstance(comparator, ast.Compare | ast.BoolOp))
            operands.append(self.index(self.reference(right)))
            symbols.append(_SYMBOLS[type(op)])
            compared = ast.Compare(
                self.identity_operand(left, op), [op], [self.identity_operand(right, op)], **_place(node)
            )
            results.append(self.assign(compared))
            left = right
        plan = (
            "C",
            tuple(symbols),
            tuple(plans),
            tuple(parenthesized),
            tuple(operands),
            tuple(self.index(self.reference(result)) for result in results),
        )
        if len(results) == 1:
            return results[0], plan
        # a chain's value into a temporary of its own: an enclosing ``and``/``or`` or comparison reads it again
        return self.assign(
            ast.BoolOp(ast.And(), [self.reference(result) for result in results], **self.at)
        ), plan

    def statements(self, test: ast.expr, message: ast.expr | None) -> list[ast.stmt]:
        top, plan = self.visit(test)
        arguments: list[ast.expr] = [
            # as text: a nested tuple constant made compile() five times slower (merging constants)
            ast.Constant(repr(plan), **self.at),
            ast.Tuple(self.values, ast.Load(), **self.at),
        ]
        if message is not None:
            arguments.append(message)
        failure = ast.Raise(ast.Call(self.name(_HELPER), arguments, [], **self.at), None, **self.at)
        statements: list[ast.stmt] = []
        if self.maybe_unset:
            targets: list[ast.expr] = [self.name(name, True) for name in self.maybe_unset]
            statements.append(ast.Assign(targets, self.name(_UNSET), **self.at))
        statements.extend(self.block)
        statements.append(ast.If(ast.UnaryOp(ast.Not(), top, **self.at), [failure], [], **self.at))
        if self.temps:
            cleared: list[ast.expr] = [self.name(name, True) for name in self.temps]
            statements.append(ast.Assign(cleared, ast.Constant(None, **self.at), **self.at))
        return statements


_VISITORS: dict[type[ast.AST], Callable[[_AssertRewrite, Any], tuple[ast.expr, Plan]]] = {
    ast.Name: _AssertRewrite.visit_name,
    ast.NamedExpr: _AssertRewrite.visit_named,
    ast.Attribute: _AssertRewrite.visit_attribute,
    ast.Call: _AssertRewrite.visit_call,
    ast.UnaryOp: _AssertRewrite.visit_unary,
    ast.BinOp: _AssertRewrite.visit_binary,
    ast.BoolOp: _AssertRewrite.visit_boolean,
    ast.Compare: _AssertRewrite.visit_compare,
}


def rewrite_tree(tree: ast.Module, source: str, keep_messages: bool = False) -> ast.Module:
    """Replace every ``assert`` of ``tree`` (in place; returned for convenience). Statement lists are walked,
    never expressions, which cannot hold an assert. A module whose docstring says ``PYTEST_DONT_REWRITE`` is
    left alone, as pytest leaves it. ``keep_messages``: an assert with a message stays plain (see
    :func:`compile_test_file`)."""
    docstring = ast.get_docstring(tree, clean=False)
    if docstring is not None and "PYTEST_DONT_REWRITE" in docstring:
        return tree
    walrus = ":=" in source
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        for field, value in ast.iter_fields(node):
            if isinstance(value, list):
                if not any(isinstance(child, ast.Assert) for child in value):
                    pending.extend(
                        child
                        for child in value
                        if isinstance(child, ast.stmt | ast.excepthandler | ast.match_case)
                    )
                    continue
                replaced: list[Any] = []
                for child in value:
                    if isinstance(child, ast.Assert) and not (keep_messages and child.msg is not None):
                        replaced.extend(_AssertRewrite(child, walrus).statements(child.test, child.msg))
                    else:
                        replaced.append(child)
                        if isinstance(child, ast.stmt | ast.excepthandler | ast.match_case):
                            pending.append(child)
                setattr(node, field, replaced)
    return tree


REWRITE_VERSION = 10
_CACHE_TAG = f"{sys.implementation.cache_tag}-rt-test-{REWRITE_VERSION}"


def _cache_path(path: Path, helper: bool = False) -> Path:
    tag = f"{_CACHE_TAG}-helper" if helper else _CACHE_TAG
    return path.parent / "__pycache__" / f"{path.name[:-3]}.{tag}.pyc"


def _read_bytes(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def _read_cache(
    path: Path, stat: os.stat_result, helper: bool = False, read: Callable[[str], bytes] = _read_bytes
) -> types.CodeType | None:
    try:
        data = read(str(_cache_path(path, helper)))
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


_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC


def _write_cache(path: Path, stat: os.stat_result, code: types.CodeType, helper: bool = False) -> None:
    """Best effort, like Python's own .pyc files: a read-only tree just means no cache. Written with the real
    functions (:class:`RealOs`): a module a test imports while it fakes the file system is cached on the disk,
    as Python caches it, not in the fake."""
    if sys.dont_write_bytecode:
        return
    target = str(_cache_path(path, helper))
    temporary = f"{target}.{RealOs.getpid()}.tmp"
    data = memoryview(struct.pack("<qq", stat.st_mtime_ns, stat.st_size) + marshal.dumps(code))
    try:
        with contextlib.suppress(FileExistsError):
            RealOs.mkdir(os.path.dirname(target))
        descriptor = RealOs.open(temporary, _WRITE_FLAGS, 0o666)
        try:
            while data:
                data = data[RealOs.write(descriptor, data) :]
        finally:
            RealOs.close(descriptor)
        RealOs.replace(temporary, target)
    except OSError:
        with contextlib.suppress(OSError):
            RealOs.unlink(temporary)


def compile_test_file(
    path: Path, helper: bool = False, read: Callable[[str], bytes] = _read_bytes
) -> types.CodeType:
    """Compile ``path`` with rewritten asserts, through a cache in ``__pycache__`` (as pytest does) keyed on
    the file's mtime and size, the Python version and the rewriter's version.

    ``helper``: a module of the suite that is neither a test file nor a conftest.py, which pytest does not
    rewrite. Its asserts without a message are rewritten (a failure in a helper shows the values), but one
    with a message keeps it alone, as pytest leaves it: a test may compare that text
    (``str(excinfo.value) == "message"``), and code next to the tests may be the library's own.

    ``read``: how the source and the cache are read; the import hook's loader passes importlib's own
    ``get_data``, so a module imported while a test runs is read as Python reads any module (blockbuster,
    which starlette's tests turn on, fails a file read in an event loop unless importlib's ``get_data`` makes
    it), and its stat with the real ``os.stat`` (a module a test reloads while it fakes the file system, see
    :class:`RealOs`)."""
    stat = RealOs.stat(path)
    cached = _read_cache(path, stat, helper, read)
    if cached is not None:
        return cached
    # decode as Python does: a PEP 263 coding line or a BOM is honoured, universal newlines
    source = importlib.util.decode_source(read(str(path)))
    filename = str(path)
    # the cyclic garbage collector, run again and again over the growing tree of a big file, measured as more
    # than half the time of the rewrite (bench/assert_rewrite.py): the tree holds no garbage to find
    collecting = gc.isenabled()
    gc.disable()
    try:
        tree = ast.parse(source, filename)
        if "assert" in source:
            tree = rewrite_tree(tree, source, keep_messages=helper)
        code = compile(tree, filename, "exec", dont_inherit=True)
    finally:
        if collecting:
            gc.enable()
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
