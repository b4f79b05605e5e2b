"""What an exception raised by a test means, without importing pytest: pytest's own outcome exceptions
(``pytest.skip``/``xfail``/``fail``/``exit``), unittest's ``SkipTest``, and rt's equivalents for marks.

pytest's are recognized by their class (module ``_pytest.outcomes``), so a suite that never imports pytest
never makes rt import it either.
"""

from __future__ import annotations

import enum
import sys
from typing import Any

_PYTEST_OUTCOMES = "_pytest.outcomes"


class Kind(enum.Enum):
    SKIP = "skip"
    XFAIL = "xfail"
    FAIL = "fail"  # pytest.fail(): a failure whose message is the whole report
    EXIT = "exit"  # pytest.exit(): the test fails and the run stops
    OTHER = "other"


class CollectError(Exception):
    """A test pytest refuses to collect, with pytest's message: a collection error of the collector holding
    it (its module or its class)."""


class SkipTest(Exception):
    """Raised by rt for a ``skip``/``skipif`` mark and an empty parameter set."""

    def __init__(self, reason: str = "") -> None:
        super().__init__(reason)
        self.msg = reason


def skip_exception(reason: str, *, module_level: bool = False) -> Exception:
    """The exception for a skip of rt's own making (a ``skip``/``skipif`` mark, ``getoption(skip=True)``, a
    unittest skip, a doctest's ``+SKIP``): pytest's ``pytest.skip.Exception`` once the suite has imported
    pytest, as pytest raises it, so a test catching it, a hook checking ``call.excinfo.type`` or
    ``errisinstance(pytest.skip.Exception)`` sees the same class under rt; rt's :class:`SkipTest` in a suite
    that never imports pytest (rt does not import it for them). ``module_level``: raised while a module is
    collected (pytest's ``allow_module_level``)."""
    pytest_outcomes = sys.modules.get(_PYTEST_OUTCOMES)
    if pytest_outcomes is None:
        return SkipTest(reason)
    skipped: Exception = pytest_outcomes.Skipped(
        reason, allow_module_level=module_level, _use_item_location=True
    )
    return skipped


class ExpectedFailure(Exception):
    """Raised by rt for ``xfail(run=False)``: the test is reported as xfailed without running."""

    def __init__(self, reason: str = "") -> None:
        super().__init__(reason)
        self.msg = reason


class ReportedFailure(Exception):
    """A failed report of a pytest test that rt did not make the failure of (a plugin's
    ``pytest_runtest_makereport`` hook changed the outcome, a plain ``pytest_runtest_protocol`` logged it):
    the report's text is the whole failure, as ``pytest.fail(text)``'s; ``crash``, the report's crash line
    (``longrepr.reprcrash.message``) when it has one, is its message, as pytest's JUnit file writes it."""

    def __init__(self, text: str, crash: str = "") -> None:
        super().__init__(text)
        self.msg = text
        self.crash = crash


def _names(exc: BaseException) -> list[tuple[str, str]]:
    return [(cls.__module__, cls.__name__) for cls in type(exc).__mro__]


#: pytest's words for a module that calls ``pytest.skip()`` at import without ``allow_module_level=True``
MODULE_LEVEL_SKIP = (
    "Using pytest.skip outside of a test will skip the entire module. If that's your intention, pass "
    "`allow_module_level=True`. If you want to skip a specific test or an entire class, use the "
    "@pytest.mark.skip or @pytest.mark.skipif decorators."
)


def classify(exc: BaseException) -> Kind:
    if isinstance(exc, SkipTest):
        return Kind.SKIP
    if isinstance(exc, ExpectedFailure):
        return Kind.XFAIL
    if isinstance(exc, ReportedFailure):
        return Kind.FAIL
    names = _names(exc)
    # pytest shows its outcome classes as builtins (``Skipped.__module__ = "builtins"``): recognized by their
    # common base, OutcomeException, which only pytest's outcomes have
    is_pytest = any(name == "OutcomeException" for _, name in names)
    for module, name in names:
        if module == _PYTEST_OUTCOMES or is_pytest:
            if name == "Skipped":
                return Kind.SKIP
            if name == "XFailed":
                return Kind.XFAIL
            if name == "Failed":
                return Kind.FAIL
            if name == "Exit":
                return Kind.EXIT
        if module == "unittest.case" and name == "SkipTest":
            return Kind.SKIP
    return Kind.OTHER


def xfail_applies(error: BaseException, xfail: tuple[str, Any, bool] | None) -> bool:
    """Whether the xfail mark ``xfail`` (reason, raises, strict) makes what a phase of the test raised,
    ``error``, an expected failure, as pytest's skipping plugin makes the report of any phase (set-up, call,
    teardown): an error or ``pytest.fail()`` of a class ``raises`` allows (any, without it). Not a failed
    report a hook made (:class:`ReportedFailure`): that report is the hooks' last word, the mark applied before."""
    if xfail is None or isinstance(error, ReportedFailure):
        return False
    if classify(error) not in (Kind.OTHER, Kind.FAIL):
        return False
    raises = xfail[1]
    return raises is None or isinstance(error, raises)


def exit_code(exc: BaseException | None) -> int | None:
    """``pytest.exit(msg, returncode=N)``'s N when ``exc`` is that exit with a code, else None."""
    if exc is None or classify(exc) is not Kind.EXIT:
        return None
    code = getattr(exc, "returncode", None)
    return code if isinstance(code, int) else None


def interrupt_reason(exc: BaseException | None) -> str | None:
    """What ``pytest.exit(msg)`` stopped the run with, in pytest's words ("_pytest.outcomes.Exit: msg", the
    line pytest prints between ``!`` rules); None for anything else (a KeyboardInterrupt says so itself)."""
    if exc is None or classify(exc) is not Kind.EXIT:
        return None
    cls = type(exc)
    name = cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
    return f"{name}: {reason(exc)}"


def reason(exc: BaseException) -> str:
    """The message a skip/xfail/fail carries (pytest keeps it in ``.msg``)."""
    message = getattr(exc, "msg", None)
    if isinstance(message, str):
        return message
    return str(exc)
