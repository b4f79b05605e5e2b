"""pytest's built-in fixtures, provided by rt: tmp_path, tmp_path_factory, tmpdir, tmpdir_factory, capsys,
capsysbinary, capfd, capfdbinary, caplog, monkeypatch, recwarn, pytestconfig, cache, record_property,
record_testsuite_property, record_xml_attribute, doctest_namespace (``request`` is the fixture machinery's own).

``monkeypatch`` and ``tmpdir`` reuse pytest's public helper classes (imported only when a test asks for them,
and a suite that uses them has pytest installed); the others are small enough to write here.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import warnings
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from rt_testrunner import capture
from rt_testrunner.fixtures import FixtureDef, argnames

if TYPE_CHECKING:
    from rt_testrunner.caplog import LogCaptureFixture
    from rt_testrunner.temp_paths import TempPathFactory


class CaptureResult(NamedTuple):
    out: Any
    err: Any


def _tmp_name(request: Any) -> str:
    name = re.sub(r"[\W]", "_", request.node.name)
    return name[:30]


class CaptureFixture:
    """``capsys``: what the test wrote through ``sys.stdout``/``sys.stderr`` since the last ``readouterr()``,
    kept apart from the test's captured output as pytest's fixture keeps it: while it is set up the two
    streams are objects of its own (:func:`capture.fixture_started`), so what goes through a stream an
    object kept before it started is not in ``readouterr()``; what it takes and the test does not read joins
    the test's captured output at the end of each phase (:meth:`push`), as pytest's fixture gives it to the
    global capture when it closes after each phase."""

    def __init__(self, binary: bool = False, tee: bool = False) -> None:
        self.tee = tee
        self._binary = binary
        #: the running test's capture, made here for a test whose output is not captured (``-s``)
        self._test: capture.Capture | None = None
        self._token: Any = None
        self._taken: dict[str, list[str]] = {"out": [], "err": []}
        #: how much of ``_taken`` the test's captured output has already (:meth:`push`): the pieces after it
        #: are the file the stream is in this phase, as pytest's fixture opens a new one each phase
        self._pushed = {"out": 0, "err": 0}
        #: where each stream is in this phase's file once the test sought in it (capture_file.py); absent:
        #: at the end
        self._positions: dict[str, int] = {}
        #: what follows a stream's position while the test writes over it (capture_file.write_at)
        self._tails: dict[str, tuple[str, int]] = {}

    def _start(self) -> None:
        capture.route_streams()  # -s: the fixture's streams replace the routers, not the terminal's
        test = capture.CURRENT.get()
        if test is None:  # -s with -p no:logging, or not in a test's run
            test = capture.Capture(passthrough=True)
            self._token = capture.CURRENT.set(test)
        self._test = test
        self._open()
        capture.fixture_started(self, test)

    def _open(self) -> None:
        """What the fixture takes from now on, besides the streams."""

    def _stop(self) -> None:
        assert self._test is not None
        self.push()
        capture.fixture_stopped(self._test)
        self._close()
        if self._token is not None:
            capture.CURRENT.reset(self._token)

    def _close(self) -> None:
        """What :meth:`_open` took, given back."""

    def write(self, which: str, text: str) -> None:
        if which in self._positions:  # after a seek before the end: over what is there, as into CaptureIO
            from rt_testrunner.capture_file import write_at

            tail, after = write_at(
                self._taken[which],
                self._pushed[which],
                self._positions[which],
                text,
                self._tails.pop(which, None),
            )
            if tail is not None:
                self._tails[which] = tail
            if after is None:
                del self._positions[which]  # at the end again: appends
            else:
                self._positions[which] = after
            return
        self._taken[which].append(text)

    def seek(self, which: str, offset: int, whence: int) -> int:
        from rt_testrunner.capture_file import place, sought

        if which in self._tails and (offset, whence) == (0, 1):
            return self._positions[which]  # tell() while writing over: no end to count, nothing to join
        self._collect()
        length = sum(map(len, self._taken[which][self._pushed[which] :]))
        return place(
            self._positions, which, sought(length, self._positions.get(which), offset, whence), length
        )

    def read(self, which: str, size: int | None) -> str:
        from rt_testrunner.capture_file import place, read_from

        self._collect()
        if which not in self._positions:
            return ""
        whole = "".join(self._taken[which][self._pushed[which] :])
        text, position = read_from(whole, self._positions[which], size)
        place(self._positions, which, position, len(whole))
        return text

    def truncate(self, which: str, size: int | None) -> int:
        from rt_testrunner.capture_file import place, truncate_to

        self._collect()
        start = self._pushed[which]
        position = self._positions.get(which, sum(map(len, self._taken[which][start:])))
        size = position if size is None else size
        truncate_to(self._taken[which], start, size)
        place(self._positions, which, position, sum(map(len, self._taken[which][start:])))
        return size

    def fileno(self, which: str) -> int:
        raise io.UnsupportedOperation("fileno")

    def push(self) -> None:
        """What the fixture took this phase and the test did not read, given to the test's captured output;
        the next phase writes to a new file, at its start (pytest's fixture closes its ``CaptureIO`` after
        each phase and opens another: a ``seek(0)`` in the call does not reach what set-up printed)."""
        self._collect()
        assert self._test is not None
        for which, taken in self._taken.items():
            if not self.tee:  # capteesys passed it on as it was written
                text = "".join(taken[self._pushed[which] :])
                if text:
                    self._test.take(which, text)
            self._pushed[which] = len(taken)
        self._positions = {}

    def _collect(self) -> None:
        """What reached the fixture other than through :meth:`write`, added to ``_taken`` (after the text
        past a stream's position, which joins it first: see :meth:`_settle`)."""
        self._settle()

    def _settle(self) -> None:
        """The text after a stream's position, while the test writes over it, joins ``_taken`` again."""
        if self._tails:
            from rt_testrunner.capture_file import settle

            for which, tail in self._tails.items():
                settle(self._taken[which], tail)
            self._tails.clear()

    def readouterr(self) -> CaptureResult:
        self._collect()
        out, err = ("".join(self._taken[which]) for which in ("out", "err"))
        self._taken = {"out": [], "err": []}
        self._pushed = {"out": 0, "err": 0}
        self._positions, self._tails = {}, {}  # pytest's fixture truncates its file and seeks to 0
        if self._binary:
            return CaptureResult(out.encode(), err.encode())
        return CaptureResult(out, err)

    @contextlib.contextmanager
    def disabled(self) -> Iterator[None]:
        token = capture.CURRENT.set(None)
        try:
            with capture.descriptors_suspended():
                yield
        finally:
            capture.CURRENT.reset(token)


class FdCaptureFixture(CaptureFixture):
    """``capfd``: what reaches file descriptors 1 and 2 (``print``, subprocesses, C code), in order: the two
    descriptors point at temporary files while it is set up, and its ``sys.stdout``/``sys.stderr`` write to
    them, as pytest's capfd points its streams at the descriptors' files."""

    def _open(self) -> None:
        #: per descriptor: the temporary file, how much of it ``_taken`` has
        self._files: list[list[Any]] = []
        #: what ``_taken`` holds, as the bytes read (``capfdbinary``)
        self._raw: dict[str, list[bytes]] = {"out": [], "err": []}
        self._saved: list[int] = []
        import tempfile

        for fd, stream in ((1, sys.__stdout__), (2, sys.__stderr__)):
            if stream is not None:
                stream.flush()
            temporary = tempfile.TemporaryFile(buffering=0)  # noqa: SIM115 - closed in _close, after the test
            self._saved.append(os.dup(fd))
            os.dup2(temporary.fileno(), fd)
            self._files.append([temporary, 0])

    def write(self, which: str, text: str) -> None:
        os.write(1 if which == "out" else 2, text.encode("utf-8", "replace"))

    def fileno(self, which: str) -> int:
        return 1 if which == "out" else 2

    def _restore(self) -> None:
        for stream in (sys.__stdout__, sys.__stderr__):
            if stream is not None:
                stream.flush()
        for fd, saved in zip((1, 2), self._saved, strict=True):
            os.dup2(saved, fd)

    def _close(self) -> None:
        self._restore()
        for saved in self._saved:
            os.close(saved)
        for temporary, _ in self._files:
            temporary.close()

    def _collect(self) -> None:
        self._settle()
        for which, entry in zip(("out", "err"), self._files, strict=True):
            temporary, position = entry
            temporary.seek(position)
            data = temporary.read()
            entry[1] = position + len(data)
            if data:
                self._taken[which].append(data.decode(errors="replace"))
                self._raw[which].append(data)

    def readouterr(self) -> CaptureResult:
        """capfdbinary's are the bytes as written (not decoded and encoded again)."""
        self._collect()
        raw = self._raw
        self._raw = {"out": [], "err": []}
        result = super().readouterr()
        if self._binary:
            return CaptureResult(b"".join(raw["out"]), b"".join(raw["err"]))
        return result

    @contextlib.contextmanager
    def disabled(self) -> Iterator[None]:
        """The terminal's descriptors and streams again for a while, as pytest's ``capfd.disabled()``."""
        captured = [os.dup(fd) for fd in (1, 2)]
        self._restore()
        token = capture.CURRENT.set(None)
        try:
            yield
        finally:
            capture.CURRENT.reset(token)
            for stream in capture.real_streams():
                stream.flush()
            for fd, saved in zip((1, 2), captured, strict=True):
                os.dup2(saved, fd)
                os.close(saved)


class TempdirFactory:
    """``tmpdir_factory``: ``tmp_path_factory`` answering with ``py.path.local`` objects, as ``tmpdir``."""

    def __init__(self, factory: TempPathFactory) -> None:
        self._factory = factory

    def mktemp(self, basename: str, numbered: bool = True) -> Any:
        return _legacy_path(self._factory.mktemp(basename, numbered))

    def getbasetemp(self) -> Any:
        return _legacy_path(self._factory.getbasetemp())


def _legacy_path(path: Path) -> Any:
    from _pytest._py.path import LocalPath

    return LocalPath(path)  # type: ignore[no-untyped-call]


class Cache:
    """``cache`` and ``config.cache``: values kept from one run to the next, where pytest keeps them (JSON
    files under ``.pytest_cache/v/`` of the rootdir, or the ``cache_dir`` ini value; folders under ``d/``),
    so a suite sees what its earlier pytest or rt runs stored."""

    def __init__(self, directory: Path) -> None:
        self._dir = directory

    def get(self, key: str, default: Any) -> Any:
        import json

        try:
            return json.loads((self._dir / "v" / key).read_text(encoding="utf-8"))
        except (ValueError, OSError):
            return default

    def set(self, key: str, value: Any) -> None:
        import json

        path = self._dir / "v" / key
        self._ensure()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True), encoding="utf-8")

    def mkdir(self, name: str) -> Path:
        if "/" in name or os.sep in name:
            raise ValueError(f"name is not allowed to contain path separators: {name!r}")
        self._ensure()
        path = self._dir / "d" / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def makedir(self, name: str) -> Any:
        return _legacy_path(self.mkdir(name))

    def _ensure(self) -> None:
        """A new cache folder ignores itself in git, as pytest's does."""
        if not self._dir.is_dir():
            self._dir.mkdir(parents=True, exist_ok=True)
            (self._dir / ".gitignore").write_text(
                "# Created by rt test automatically.\n*\n", encoding="utf-8"
            )


class WarningsRecorder(warnings.catch_warnings):
    """``recwarn``: every warning the test raised."""

    def __init__(self) -> None:
        super().__init__(record=True)
        self._list: list[warnings.WarningMessage] = []

    def __enter__(self) -> Any:
        recorded = super().__enter__()
        self._list = recorded if recorded is not None else []
        warnings.simplefilter("always")
        return self

    @property
    def list(self) -> list[warnings.WarningMessage]:
        return self._list

    def __getitem__(self, index: int) -> warnings.WarningMessage:
        return self._list[index]

    def __iter__(self) -> Iterator[warnings.WarningMessage]:
        return iter(self._list)

    def __len__(self) -> int:
        return len(self._list)

    def pop(self, cls: type[Warning] = Warning) -> warnings.WarningMessage:
        for index, message in enumerate(self._list):
            if issubclass(message.category, cls):
                return self._list.pop(index)
        raise AssertionError(f"{cls!r} not found in warning list")

    def clear(self) -> None:
        self._list[:] = []


def tmp_path_factory(request: Any) -> TempPathFactory:
    return request.config._tmp_path_factory  # type: ignore[no-any-return]


def tmp_path(request: Any, tmp_path_factory: TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp(_tmp_name(request), numbered=True)
    yield path
    if tmp_path_factory.retention_policy == "failed":  # kept only for a test whose call did not pass
        from rt_testrunner.state import CURRENT

        state = CURRENT.get()
        if state is None or not state.call_failed:
            import shutil

            shutil.rmtree(path, ignore_errors=True)


def tmpdir(tmp_path: Path) -> Any:
    from _pytest._py.path import LocalPath

    return LocalPath(tmp_path)  # type: ignore[no-untyped-call]


def tmpdir_factory(tmp_path_factory: TempPathFactory) -> TempdirFactory:
    return TempdirFactory(tmp_path_factory)


def capsys() -> Iterator[CaptureFixture]:
    fixture = CaptureFixture()
    fixture._start()
    yield fixture
    fixture._stop()


def capteesys() -> Iterator[CaptureFixture]:
    """pytest 8.4's ``capteesys``: ``capsys`` whose output is also shown as the test writes it."""
    fixture = CaptureFixture(tee=True)
    fixture._start()
    yield fixture
    fixture._stop()


def capsysbinary() -> Iterator[CaptureFixture]:
    fixture = CaptureFixture(binary=True)
    fixture._start()
    yield fixture
    fixture._stop()


def capfd() -> Iterator[CaptureFixture]:
    fixture = FdCaptureFixture()
    fixture._start()
    yield fixture
    fixture._stop()


def capfdbinary() -> Iterator[CaptureFixture]:
    fixture = FdCaptureFixture(binary=True)
    fixture._start()
    yield fixture
    fixture._stop()


def cache(request: Any) -> Cache:
    return request.config.cache  # type: ignore[no-any-return]


def record_property(request: Any) -> Any:
    """``record_property(name, value)``: kept in ``request.node.user_properties`` (rt's JUnit report does not
    write them)."""

    def record(name: str, value: object) -> None:
        request.node.user_properties.append((name, value))

    return record


def record_testsuite_property(request: Any) -> Any:
    def record(name: str, value: object) -> None:
        request.session.testsuite_properties.append((name, value))

    return record


def record_xml_attribute(request: Any) -> Any:
    def record(name: str, value: object) -> None:
        request.node.user_properties.append((name, value))

    return record


def caplog(request: Any) -> Iterator[LogCaptureFixture]:
    """The test's caplog object, made when its setup began (pyruntest), or here for a caller that is not a
    pytest test's run."""
    from rt_testrunner.caplog import LogCaptureFixture

    fixture = getattr(request._item, "caplog", None)
    if fixture is not None:
        yield fixture
        fixture.restore_levels()  # its handler stays until the test's teardown is over
        return
    fixture = LogCaptureFixture()
    fixture.enter("call")
    yield fixture
    fixture.finish()


def monkeypatch() -> Iterator[Any]:
    from _pytest.monkeypatch import MonkeyPatch

    patcher = MonkeyPatch()
    yield patcher
    patcher.undo()


def recwarn() -> Iterator[WarningsRecorder]:
    recorder = WarningsRecorder()
    with recorder:
        yield recorder


def pytestconfig(request: Any) -> Any:
    return request.config


#: the run's ``doctest_namespace``: what fixtures put there is given to the doctests that run after them
DOCTEST_NAMESPACE: dict[str, Any] = {}


def doctest_namespace() -> dict[str, Any]:
    return DOCTEST_NAMESPACE


def subtests() -> Any:
    """pytest 9's ``subtests``: ``with subtests.test(msg, **params):`` blocks, each a result of its own."""
    from rt_testrunner.subtests import Subtests

    return Subtests()


_SCOPES = {
    "tmp_path_factory": "session",
    "tmpdir_factory": "session",
    "record_testsuite_property": "session",
    "pytestconfig": "session",
    "doctest_namespace": "session",
}
_NAMES = (
    "tmp_path_factory",
    "tmp_path",
    "tmpdir",
    "tmpdir_factory",
    "capsys",
    "capteesys",
    "capsysbinary",
    "capfd",
    "capfdbinary",
    "cache",
    "record_property",
    "record_testsuite_property",
    "record_xml_attribute",
    "caplog",
    "monkeypatch",
    "recwarn",
    "pytestconfig",
    "doctest_namespace",
    "subtests",
)


#: the pytest plugin that defines each fixture (the others are pytest's core): ``-p no:NAME`` takes them away
_PLUGIN_OF = {
    "tmp_path_factory": "tmpdir",
    "tmp_path": "tmpdir",
    "tmpdir": "legacypath",
    "tmpdir_factory": "legacypath",
    "capsys": "capture",
    "capteesys": "capture",
    "capsysbinary": "capture",
    "capfd": "capture",
    "capfdbinary": "capture",
    "cache": "cacheprovider",
    "record_property": "junitxml",
    "record_testsuite_property": "junitxml",
    "record_xml_attribute": "junitxml",
    "caplog": "logging",
    "monkeypatch": "monkeypatch",
    "recwarn": "recwarn",
    "doctest_namespace": "doctest",
    "subtests": "subtests",
}


def definitions(
    removed: AbstractSet[str] = frozenset(), unconfigured: AbstractSet[str] = frozenset()
) -> list[FixtureDef]:
    """The built-in fixtures, but those of the plugins the command line's ``-p no:NAME`` blocks (``removed``:
    pytest blocks them before it loads its own plugins, so ``fixture 'caplog' not found``). A plugin blocked
    in ``addopts`` or ``PYTEST_ADDOPTS`` (``unconfigured``) is blocked after its fixtures were read: they
    stay, without the plugin's work behind them (pytest's ``capsys`` then fails to find its capture manager)."""
    namespace = globals()
    found = []
    for name in _NAMES:
        plugin = _PLUGIN_OF.get(name)
        if plugin in removed:
            continue
        function = namespace[name]
        if plugin == "capture" and plugin in unconfigured:
            function = _no_capture_manager
        found.append(FixtureDef(name, function, _SCOPES.get(name, "function"), argnames=argnames(function)))
    return found


def _no_capture_manager() -> None:
    """A capture fixture of pytest's capture plugin blocked in ``addopts``: it fails as pytest's does."""
    raise AttributeError("'NoneType' object has no attribute 'set_fixture'")
