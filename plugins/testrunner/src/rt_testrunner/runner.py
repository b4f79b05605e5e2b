"""Running the tests: one process, files in order, hooks around tests, retries, time-outs, concurrency, bail.

The run is split by concern, as pytest separates them: :mod:`~rt_testrunner.collect` loads files into suite
trees, :mod:`~rt_testrunner.schedule` decides what runs, in which order and what runs together,
:mod:`~rt_testrunner.execute` calls tests and hooks (main thread or event loop, time-outs), and
:mod:`~rt_testrunner.report` turns outcomes into :mod:`rt.events` events for the reporters. This module walks
the trees and ties the four together. ``rt test --parallel`` runs this same runner in each worker process
(:mod:`~rt_testrunner.worker`), fed files one at a time by :mod:`~rt_testrunner.pool`.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from rt.events import (
    FileFinished,
    FileStarted,
    Location,
    RunFinished,
    RunStarted,
    TestFailure,
    TestFinished,
    TestStarted,
    TestStatus,
)
from rt.interfaces import Reporter
from rt_testrunner import (
    capture,
    clock,
    collect,
    exiting,
    importing,
    outcomes,
    pyconfig,
    pywarnings,
    snapshots,
    timeouts,
)
from rt_testrunner.discovery import SUFFIXES, TestFile, python_file_matches
from rt_testrunner.execute import MAIN_THREAD, Executor, Outcome, PytestHook, ScopeTeardown
from rt_testrunner.model import Suite, TestCase
from rt_testrunner.options import RunOptions
from rt_testrunner.pyruntest import NO_TIMEOUT_MS, finish_session_scopes, session_finished
from rt_testrunner.pysession import PytestSession
from rt_testrunner.report import Recorder
from rt_testrunner.schedule import Schedule, split_group

if TYPE_CHECKING:
    from rt_testrunner.session_order import Segment


def _following(turns: Sequence[TestFile | FilePart | Segment]) -> list[Path | None]:
    """Each turn's next file (``None`` after the last one)."""
    paths = [(turn if isinstance(turn, TestFile) else turn.file).path for turn in turns]
    return [*paths[1:], None]


def _inside(path: Path, package: str) -> bool:
    return os.path.abspath(path).startswith(os.path.join(os.path.abspath(package), ""))


@attrs.frozen
class FilePart:
    """Some of a file's tests, for a ``--parallel`` worker: its top-level tests (in the order the run gives
    them) from ``start`` up to ``stop`` (:meth:`Runner.parts` says which files may be cut). Module-scoped
    fixtures run once per part, as pytest-xdist's ``--dist load`` sets them up once per worker that runs
    tests of the module."""

    file: TestFile
    start: int
    stop: int


class Runner:
    def __init__(self, options: RunOptions, reporters: Sequence[Reporter], backend: str = "asyncio") -> None:
        self.options = options
        self.executor = Executor(backend, options.capture)
        self.executor.untimed_pytest_hooks = not options.explicit_timeout
        self.recorder = Recorder(reporters, options.root, options.bail)
        self.schedule = Schedule(
            options.name_pattern,
            options.only,
            options.todo,
            options.seed,
            options.concurrent,
            options.keyword,
            options.markexpr,
            options.pyconfig.deselect if options.pyconfig is not None else (),
        )
        self.session = PytestSession(options.pyconfig or pyconfig.load(options.root), options.root, backend)
        # pytest's config.option holds -k and -m, which plugins read and may change (Schedule.follow)
        option = self.session.config.option
        option.keyword, option.markexpr = options.keyword or "", options.markexpr or ""
        #: ``-p no:capture``: nothing is captured, as ``-s``
        self.capture = options.capture and "capture" not in self.session.blocked
        self.executor.capture_output = self.capture
        self.executor.capture_logs = self.session.logging_plugin
        self.preload_root = Suite(None)
        #: the test that ran last, and its file: a pytest scope torn down after it is torn down in its teardown
        self._last_test: tuple[TestCase, str] | None = None
        #: the result of a pytest-style test that failed, held until the scopes it was the last test of are
        #: torn down: what their teardown writes is shown with its failure, as pytest shows it
        self._held: TestFinished | None = None
        #: the package and session fixtures' teardown: run with the last file of a one-process run, as pytest
        #: runs it in the teardown of the run's last test (what it writes joins that test's report when it
        #: failed); else, and a second time for nothing, among the run's ``after_all`` hooks
        self._session_teardown = ScopeTeardown(lambda: finish_session_scopes(self.session))
        self.limiter: Any = None
        self.filtered_out = 0  # tests that -t / -k / -m left out (the summary's ` N filtered out`)
        #: pytest-style files collected before the run (their suite, or what loading them raised)
        self._collected: dict[Path, Suite | BaseException] = {}
        #: :meth:`precollect` ran (a ``--parallel`` zygote collected before forking this worker), and the file
        #: whose import stopped the run then, if one did
        self._precollected = False
        self._stopped_by: TestFile | None = None
        #: the folder units of a pytest_collect_directory hook the sources did not show (pydirectory.py)
        self._folder_units: list[TestFile] = []
        #: pytest's usage error for rt test's command line, found once the run is collected, or its internal
        #: error at start-up: the exit status and the line the run stops with before any test (see _refuse)
        self._refused: tuple[int, str] | None = None
        #: the first node id of the command line that names nothing its file collected (``FILE::NAME``),
        #: judged before ``pytest_collection_modifyitems`` as pytest does (a hook's deselection is no typo)
        self._not_found: str | None = None
        #: a pytest-style file failed to collect, so no test ran (pytest's exit status 2 for the hooks)
        self.collection_stopped = False
        #: files a conftest.py left out of the collection (``collect_ignore``): run as empty, not shown
        self.not_collected: set[str] = set()
        #: each file's next one in a one-process run (its first test is the ``nextitem`` of the file's last)
        self._following: dict[Path, TestFile] = {}
        #: the session's end calls the ``pytest_terminal_summary`` hooks: in one process, and in the one
        #: ``--parallel`` worker the main process hands the whole run's results (:attr:`whole_run`)
        self.summary = True
        #: those results (a ``--parallel`` worker's, given at its end); None: this process's own
        self.whole_run: list[TestFinished] | None = None
        #: and the other workers' serialized test reports, for this worker's report plugins (report_replay.py)
        self.replayed: list[dict[str, Any]] = []
        #: and the run's warnings as (where, text) pairs: the collection's, the tests'
        self.whole_run_warnings: tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]] | None = None
        #: and how many files of the whole run failed to load (they are no test's result)
        self.whole_run_load_errors = 0
        #: the ``session.exitstatus`` a ``pytest_sessionfinish`` or summary hook set, None when none did (a
        #: ``--parallel`` worker that ends the session hands it to the main process with its DONE)
        self.hook_exit_status: int | None = None
        #: the files whose left-out tests this process told (pytest_deselected): a --parallel worker's own
        self._told_deselected: set[Path] = set()
        #: a ``--parallel`` worker's collected tests by node id, for the turns of the session's order (segment)
        self._by_node_id: dict[Path, dict[str, TestCase]] = {}

    @property
    def counts(self) -> dict[TestStatus, int]:
        return self.recorder.counts

    @property
    def bailed(self) -> bool:
        return self.recorder.bailed

    # -- the run -----------------------------------------------------------------------------------------------

    def run_sync(
        self, files: Sequence[TestFile], order: Iterable[TestFile | FilePart | Segment] | None = None
    ) -> RunFinished:
        """Run everything; returns the final event (also emitted). ``order``: see :meth:`run`."""
        finished: RunFinished = self.executor.run_sync(self.run(files, order))
        return finished

    async def run(
        self, files: Sequence[TestFile], order: Iterable[TestFile | FilePart | Segment] | None = None
    ) -> RunFinished:
        """Collect ``files`` and run them, or run the files ``order`` yields (a ``--parallel`` worker: the
        files the main process hands it, one at a time, while it collected them all as a one-process run
        does)."""
        started = clock.perf_counter()
        warnings_before = pywarnings.recorded()
        listed_before = {when: len(pywarnings.listed(when)) for when in ("collect", "tests")}
        properties_before = len(self.session.testsuite_properties)
        emit = self.recorder.emit
        emit(
            RunStarted(
                [f.relative for f in files],
                self.options.seed,
                str(self.options.root),
                bail=self.options.bail,
                rerun_each=self.options.rerun_each,
            )
        )
        self._prepare_imports(files)
        self._real_streams = capture.real_streams()
        try:
            with timeouts.installed() as self.executor.alarms:
                preload_error = self._load_preload()
                if preload_error is not None:
                    self.counts[TestStatus.ERROR] += 1
                    emit(FileStarted(preload_error[0]))
                    emit(FileFinished(preload_error[0], 0.0, preload_error[1]))
                else:
                    self.preload_root.hooks["after_all"] += [
                        self._session_teardown,
                        PytestHook(self._finish_session),
                    ]
                    await self._run_files(files, files if order is None else order)
        finally:
            capture.uninstall()
        self.recorder.warnings += pywarnings.recorded() - warnings_before
        for when in ("collect", "tests"):  # pytest lists the collection's warnings first
            self.recorder.warning_list += pywarnings.listed(when, listed_before[when])
        self.recorder.testsuite_properties += self.session.suite_properties(properties_before)
        finished = self.recorder.run_finished(
            files=sum(not f.directory for f in files),  # a folder unit (pydirectory.py) is none
            duration=clock.perf_counter() - started,
            seed=self.options.seed,
            filtered_out=self.filtered_out,
            snapshots=snapshots.counts(),
        )
        emit(finished)
        return finished

    def collect_only(self, files: Sequence[TestFile]) -> tuple[list[str], list[tuple[str, TestFailure]]]:
        """pytest's ``--collect-only``: the node ids of the tests the run would select (``path::Class::test[id]``;
        an ``rt.test`` test's ``path::describe > test``), in run order, and each file that failed to collect
        with its error; the tests left out are counted in ``filtered_out``. No test, fixture or hook of a test
        runs."""
        self._prepare_imports(files)
        ids: list[str] = []
        errors: list[tuple[str, TestFailure]] = []
        try:
            with timeouts.installed() as self.executor.alarms:
                stopped_by = self._collect_pytest_files(files)
                files = self._with_folder_units(files)
                for test_file in files if stopped_by is None else [stopped_by]:
                    try:
                        root = self._load(test_file, 1)
                    except BaseException as exc:  # a test file's error of any kind is a collection error
                        if isinstance(exc, GeneratorExit):
                            raise
                        errors.append((test_file.relative, _rendered(exc, self.options.root)))
                        continue
                    for path, raised in _node_errors(root):
                        if outcomes.classify(raised) is not outcomes.Kind.SKIP:  # a class's collection error
                            node = "::".join((test_file.relative, *path))
                            errors.append((node, _rendered(raised, self.options.root)))
                    tests = root.tests()
                    only_mode = self.options.only or any(t.has("only") for t in tests)
                    for case in tests:
                        if not self.schedule.selected(case, only_mode):
                            self.filtered_out += 1
                        else:
                            nodeid = getattr(case.item, "nodeid", None)
                            ids.append(str(nodeid) if nodeid else f"{test_file.relative}::{case.name}")
        finally:
            capture.uninstall()
        if self.session.items_reordered:  # in the order the hooks left session.items, as pytest lists them
            position = {str(node.nodeid): index for index, node in enumerate(self.session.items)}
            ids.sort(key=lambda nodeid: position.get(nodeid, -1))
        return ids, errors

    def _prepare_imports(self, files: Sequence[TestFile]) -> None:
        for test_file in files:
            self.session.finder.add_test_dir(test_file.path.parent)
        if self.capture or self.session.logging_plugin:
            # once per process: a forked worker keeps what its zygote installed; logging is captured without
            # the streams too (-s, -p no:capture), as pytest's logging plugin captures on its own
            method = self.session.pyconfig.capture_method if self.capture else "no"
            capture.install(logging=self.session.logging_plugin, method=method)

    def precollect(self, files: Sequence[TestFile]) -> None:
        """Import every pytest-style file now, before :meth:`run`: a ``--parallel`` zygote
        (:mod:`~rt_testrunner.zygote`) collects the run once and forks workers that inherit the imported
        modules and collected suites. Only for a run without ``--preload`` scripts, whose ``before_all`` hooks
        would come first in one process; the result is what :meth:`run` collects at its start."""
        self._prepare_imports(files)
        self._stopped_by = self._collect_pytest_files(files)
        self._precollected = True

    async def _run_files(
        self, files: Sequence[TestFile], order: Iterable[TestFile | FilePart | Segment]
    ) -> None:
        hook_error = await self.executor.hooks(
            self.preload_root, "before_all", deadline_ms=self.options.timeout_ms
        )
        if hook_error is None:
            if self._precollected:
                stopped_by = self._stopped_by
            else:
                stopped_by = self._collect_pytest_files(files)
            if order is files and self._folder_units:  # one process: the late folder units run in turn too
                files = order = self._with_folder_units(files)
            if self._refused is not None:
                self._refuse(order, *self._refused)
            elif stopped_by is None and self._collection_failed(files):
                await self._report_collection(order, one_process=order is files)
            else:
                # Ctrl-C or pytest.exit() while collecting stops the run before any test, as in pytest: only
                # the file that raised it runs its turn, which reports it and ends the run
                turns: Iterable[TestFile | FilePart | Segment] = order if stopped_by is None else [stopped_by]
                planned = self._session_order(files) if order is files and stopped_by is None else None
                if planned is not None:
                    turns = planned
                elif order is files:  # one process: a file's last test has the next file's first as nextitem
                    self._following = dict(zip((f.path for f in files), files[1:], strict=False))
                # the next file, where the whole order is known (one process): a package's fixtures end when
                # the run leaves the package; a --parallel worker's files come one at a time, and its
                # packages end with its session
                following = _following(turns) if isinstance(turns, Sequence) else None
                for index, item in enumerate(turns):
                    if self.bailed:
                        break
                    leaving = None if following is None else following[index]
                    ends_run = following is not None and leaving is None
                    if isinstance(item, FilePart):
                        await self._run_file(item.file, (item.start, item.stop), leaving)
                    elif not isinstance(item, TestFile):  # a Segment: some of a file's tests (hooks' order)
                        await self._run_file(item.file, leaving=leaving, ends_run=ends_run, segment=item)
                    elif order is files and self._collected_nothing(item):
                        continue  # a file handed to conftest.py collectors that took none of it
                    else:
                        await self._run_file(item, leaving=leaving, ends_run=ends_run)
        else:
            self.recorder.hook_failure(
                self.preload_root, "before_all", hook_error, "<preload>", self.options.timeout_ms
            )
        after_error = await self.executor.hooks(
            self.preload_root, "after_all", deadline_ms=self.options.timeout_ms
        )
        if after_error is not None:
            self._after_all_failed(self.preload_root, after_error, "<preload>")

    def _session_order(self, files: Sequence[TestFile]) -> list[TestFile | Segment] | None:
        """The run's turns in the order the ``pytest_collection_modifyitems`` hooks (or pytest's grouping by a
        session- or package-scoped parameter) left ``session.items``, when it is not the files' order
        (session_order.py); ``None`` in the common case, where no hook or parameter reordered anything across
        files. Under ``--rerun-each`` each turn runs its reruns before the next turn, as a file does."""
        if not self.session.items_reordered:
            return None
        if _in_files_order(files, self._collected, self.session.items):
            return None
        from rt_testrunner import session_order

        turns = session_order.segments(files, self._collected, self.session.items)
        if turns is not None:
            only = self.options.only
            session_order.link_next_items(turns, lambda case: self.schedule.selected(case, only))
        return turns

    def worker_turns(self, files: Sequence[TestFile]) -> list[tuple[int, tuple[str, ...] | None]] | None:
        """After :meth:`precollect` in a ``--parallel`` zygote: the session's order (:meth:`_session_order`)
        as the main process hands it out, each turn a file's index with the node ids of its tests in that
        turn (None: the whole file), or ``None`` when the files' order is the session's (or the collection
        stopped the run, or two tests share a node id). Node ids, so that a worker that collected for itself
        (fresh, its hooks' order its own: pytest-randomly's seed) runs the same tests (:meth:`segment`)."""
        if not self.session.items_reordered or self._stopped_by is not None or self._refused is not None:
            return None  # the common case costs one look
        turns = self._session_order(files)
        if turns is None or self._collection_failed(files):
            return None
        index = {test_file.path: number for number, test_file in enumerate(files)}
        planned: list[tuple[int, tuple[str, ...] | None]] = []
        seen: set[str] = set()
        for turn in turns:
            if isinstance(turn, TestFile):
                planned.append((index[turn.path], None))
                continue
            ids = tuple(str(case.item.node.nodeid) for case in turn.root.tests() if case.item is not None)
            if seen.intersection(ids) or len(set(ids)) != len(ids):
                return None
            seen.update(ids)
            planned.append((index[turn.file.path], ids))
        return planned

    def segment(self, test_file: TestFile, ids: Sequence[str], first: bool) -> Segment:
        """A ``--parallel`` worker's turn of the session's order (:meth:`worker_turns`): the tests of
        ``test_file`` named by ``ids``, in that order, under copies of their suites; ``first``: the file's
        first turn, which reports what its collection left out. Its last test learns no next one (the next
        turn may run in another worker, as pytest-xdist's worker does not know its next batch)."""
        from rt_testrunner import session_order

        whole = self._collected.get(test_file.path)
        assert isinstance(whole, Suite)  # the worker collected it: worker_turns planned no turn otherwise
        by_id = self._by_node_id.get(test_file.path)
        if by_id is None:
            by_id = {str(case.item.node.nodeid): case for case in whole.tests() if case.item is not None}
            self._by_node_id[test_file.path] = by_id
        missing = [nodeid for nodeid in ids if nodeid not in by_id]
        if missing:  # as pytest-xdist's "Different tests were collected between gw0 and gw1": one error
            return session_order.Segment(test_file, Suite(None), None, CollectionMismatch(missing[0]))
        cases = [by_id[nodeid] for nodeid in ids]
        turn = session_order.Segment(test_file, session_order.tree(whole, cases), whole if first else None)
        only = self.options.only
        session_order.link_next_items([turn], lambda case: self.schedule.selected(case, only))
        return turn

    def _refuse(self, order: Iterable[TestFile | FilePart | Segment], status: int, refused: str) -> None:
        """pytest's usage error (an option no plugin registered, a value an option refuses) or its internal
        error at start-up: no test runs, and the run ends with pytest's status (4, 3). The first file's turn
        carries it, so a ``--parallel`` worker (whose files come one at a time) tells the main process too."""
        for item in order:
            relative = (item if isinstance(item, TestFile) else item.file).relative
            self.recorder.interrupt(status, refused)
            self.recorder.emit(FileStarted(relative))
            self.recorder.emit(FileFinished(relative, 0.0))
            return

    def _load_preload(self) -> tuple[str, TestFailure] | None:
        for script in self.options.preload:
            path = (self.options.root / script).resolve()
            try:
                collect.load_preload(path, self.preload_root)
            except Exception as exc:  # noqa: BLE001 - a test's error of any kind is a result
                return script, _rendered(exc, self.options.root)
        return None

    def _collect_pytest_files(self, files: Sequence[TestFile]) -> TestFile | None:
        """Import every pytest-style file before any test runs, as pytest collects the whole session first.

        Suites rely on it: a module that saves global state when imported (pyparsing's test_unit.py saves its
        parser defaults; another module's tests change them when run) or whose tests depend on what another
        test module imports (structlog's process name needs ``multiprocessing`` imported). Files of the spec's
        own patterns that cannot be imported by name (``x.test.py``) still load just before they run, as the
        reference runtime loads them. What a file raises while loading is kept and reported when its turn
        comes, in file order; the file whose import raised KeyboardInterrupt or pytest.exit() is returned.
        The collection's warnings reach the ``pytest_warning_recorded`` hooks when it ends, as pytest's warnings
        plugin hands them on, before the start-up check: a hook raising there stops the run before any test."""
        try:
            with collect.warnings_while_collecting(self.session):
                self.session.start_collection()
                try:
                    if files:
                        collect.load_plugins_for(files, self.session)
                        self.session.load_initial_conftests()
                    return self._collect_each(files)
                finally:
                    self._not_found = self._node_ids_not_found(files)
                    self._finish_collection(files)
                    capture.settle_tempdir()
        finally:
            self._refused = self._stop_at_start_up(files)
            exiting.restore_collector()  # the suite is collected: the tests see Python's thresholds

    def _collect_folder_units(self, test_file: TestFile, asked: set[Path]) -> None:
        """The folder units of a ``pytest_collect_directory`` hook the walk did not see in the sources
        (pydirectory.folders_to_ask), collected before ``test_file`` as the walk's would be: those whose
        folder's own collector collects something beside the test modules run with the files, each before
        the files of its folder (:meth:`_with_folder_units`)."""
        from rt_testrunner import pydirectory

        for unit in pydirectory.folders_to_ask(test_file.path, self.session, asked):
            pending = len(self.session.deferred or ())
            try:
                root: Suite | BaseException = collect.load_file(unit, self.session)
            except Exception as exc:  # noqa: BLE001 - the folder's collection error, reported in its turn
                root = exc
            if not (isinstance(root, Suite) and root.flags is collect.IGNORED):
                self._collected[unit.path] = root
                self._folder_units.append(unit)
                self._before_its_files(pending, unit.path)

    def _before_its_files(self, start: int, folder: Path) -> None:
        """A late folder unit's items (those the collection keeps from ``start`` on) go before those of the
        files below its folder collected already (the plugins loaded with the first of them) in the
        session's items, as the walk's unit would be."""
        pending = self.session.deferred
        if not pending or len(pending) <= start:
            return
        below = {id(r) for p, r in self._collected.items() if folder in p.parents and isinstance(r, Suite)}
        at = next((i for i, (r, _) in enumerate(pending[:start]) if id(r) in below), None)
        if at is not None:
            pending[at:] = [*pending[start:], *pending[at:start]]

    def _with_folder_units(self, files: Sequence[TestFile]) -> Sequence[TestFile]:
        """``files`` with the folder units found once the hooks were loaded (:meth:`_collect_folder_units`)."""
        if not self._folder_units:
            return files
        from rt_testrunner import pydirectory

        return pydirectory.with_units(files, self._folder_units)

    def _stop_at_start_up(self, files: Sequence[TestFile]) -> tuple[int, str] | None:
        """pytest's internal error at start-up (:attr:`PytestSession.internal_error`), else its usage error
        for the command line and the options nothing registered, else for a node id that names nothing
        collected (node_ids.py): the status and line the run stops with."""
        if self.session.conftest_import_error is not None:
            from rt_testrunner.exit_status import USAGE_ERROR

            return USAGE_ERROR, self.session.conftest_import_error
        refused = self.session.tell_unknown_options()
        if self.session.internal_error is None and self.session.hook_error is None and refused is None:
            if self._not_found is None:
                return None
            from rt_testrunner.exit_status import USAGE_ERROR

            return USAGE_ERROR, f"not found: {self._not_found}"
        from rt_testrunner.exit_status import INTERNAL_ERROR, USAGE_ERROR  # only then: one module less

        if self.session.internal_error is not None:
            return INTERNAL_ERROR, f"internal error: {self.session.internal_error}"
        if self.session.hook_error is not None:
            return INTERNAL_ERROR, f"INTERNALERROR: {self.session.hook_error}"
        return USAGE_ERROR, f"usage error: {refused}"

    def _node_ids_not_found(self, files: Sequence[TestFile]) -> str | None:
        """The first node id naming nothing collected (node_ids.py), read before the collection hooks change
        the items: pytest checks the command line's node ids against what it collected."""
        if self.session.named_left_out is not None:
            return self.session.named_left_out
        if not any(test_file.selectors for test_file in files):
            return None
        from rt_testrunner import node_ids

        return node_ids.first_not_found(files, self._collected)

    def _finish_collection(self, files: Sequence[TestFile]) -> None:
        """The session-wide collection hooks; what they raise is a collection error of the first file. A node
        id not found leaves the items ungathered, as pytest's collection stops before them."""
        try:
            self.session.finish_collection(not_found=self._not_found is not None)
        except Exception as exc:  # noqa: BLE001 - a conftest.py's hook failing: the run stops, as pytest's
            if files:
                self._collected[files[0].path] = exc
        named = self.session.named_hooks
        if named.get("pytest_report_header") or named.get("pytest_report_collectionfinish"):
            from rt_testrunner.pyheader import print_report_lines

            print_report_lines(self.session)

    def _collect_each(self, files: Sequence[TestFile]) -> TestFile | None:
        asked = {test_file.path for test_file in files if test_file.directory}  # the walk's folder units
        for test_file in files:
            if self.session.internal_error is not None or self.session.conftest_import_error is not None:
                break  # pytest stopped at start-up, before collecting
            if not test_file.directory and self.session.named_hooks.get("pytest_collect_directory"):
                self._collect_folder_units(test_file, asked)
            if importing.importable(test_file.path) or test_file.custom or test_file.directory:
                self.collecting(test_file)
                try:
                    self._collected[test_file.path] = collect.load_file(test_file, self.session)
                except BaseException as exc:  # a test file's error of any kind is a result, reported in turn
                    if isinstance(exc, GeneratorExit):
                        raise
                    self._collected[test_file.path] = exc
                    if isinstance(exc, KeyboardInterrupt) or outcomes.classify(exc) is outcomes.Kind.EXIT:
                        return test_file
        if self.session.named_hooks.get("pytest_collect_directory"):
            for test_file in files:  # the folders of the files collected before the plugins loaded
                if not test_file.directory:
                    self._collect_folder_units(test_file, asked)
        return None

    def parts(self, files: Sequence[TestFile]) -> dict[int, tuple[int, ...]]:
        """After :meth:`precollect`: the files that may be run in parts (:class:`FilePart`), by index in
        ``files``, each with the number of selected tests in each of its top-level children, in run order.
        Only files of pytest-style test functions (a file with a class is run whole: class-based suites often
        carry state from one class to the next, as pyparsing's ``Test07`` sets what ``Test08`` checks) that
        loaded, have two tests or more and no snapshot file (a snapshot file is read and written whole, by the
        process that runs the file), and not under ``--rerun-each``."""
        found: dict[int, tuple[int, ...]] = {}
        if self.options.rerun_each != 1 or self._stopped_by is not None:
            return found
        for index, test_file in enumerate(files):
            root = self._collected.get(test_file.path)
            if not isinstance(root, Suite) or len(root.children) < 2:
                continue
            if any(isinstance(child, Suite) for child in root.children):
                continue
            tests = root.tests()
            if any(case.item is None for case in tests) or snapshots.snap_path(test_file.path).is_file():
                continue
            only_mode = self.options.only or any(t.has("only") for t in tests)
            selected = self.schedule.selected
            found[index] = tuple(
                (
                    int(selected(child, only_mode))
                    if isinstance(child, TestCase)
                    else sum(1 for t in child.tests() if selected(t, only_mode))
                )
                for child in self.schedule.ordered(root, test_file.relative)
            )
        return found

    def _collected_nothing(self, test_file: TestFile) -> bool:
        """``test_file`` was not collected (a conftest.py's ``collect_ignore`` or ``pytest_ignore_collect``
        leaves it out), or is not a test file, was given to the conftest.py files' ``pytest_collect_file``
        hooks, and none of them collected anything from it: it is not reported (as pytest does not)."""
        collected = self._collected.get(test_file.path)
        if isinstance(collected, Suite) and collected.flags is collect.IGNORED:
            del self._collected[test_file.path]
            return True
        if not (test_file.custom or test_file.directory):
            return False
        if isinstance(collected, Suite) and not collected.tests():
            del self._collected[test_file.path]
            return True
        return False

    def _finish_session(self) -> None:
        """pytest's end of the session (``pytest_sessionfinish``, ``pytest_terminal_summary`` where
        :attr:`summary`, ``pytest_unconfigure``), with the run's results as ``terminalreporter.stats``."""
        # a --parallel worker that does not end the run has none, as a pytest-xdist worker's reports go to the
        # controller: a plugin's summary from them in pytest_unconfigure (pytest-md-report's) is printed once
        own = self.recorder.results if self.summary else []
        results = self.whole_run if self.whole_run is not None else own
        if self.whole_run is not None:
            self._deselected_elsewhere()
            self.session.testsfailed = self.whole_run_load_errors + sum(
                event.status in (TestStatus.FAIL, TestStatus.ERROR) for event in self.whole_run
            )
        if self.replayed:
            from rt_testrunner.report_replay import replay

            replay(self.session, self.replayed)
        status = self._session_status()
        session_finished(self.session, status, lambda: results, self.summary, self.whole_run_warnings)
        if self.session.exitstatus != status and isinstance(self.session.exitstatus, int):
            # a sessionfinish or summary hook set session.exitstatus (0 for "no tests collected"): pytest
            # exits with it
            self.hook_exit_status = int(self.session.exitstatus)
            self.recorder.exit_code = self.hook_exit_status

    def _deselected_elsewhere(self) -> None:
        """In the ``--parallel`` worker that ends the session: the tests the filters left out of the files
        other workers ran join its own (``terminalreporter.stats["deselected"]``, ``session.testscollected``),
        as pytest's one session has them all. Every worker collected every file, so each knows them; the
        ``pytest_deselected`` hooks were called where each file ran."""
        session = self.session
        selected = self.schedule.selected
        for path, root in self._collected.items():
            if path in self._told_deselected or not isinstance(root, Suite):
                continue
            items = [
                case.item for case in root.tests() if case.item is not None and not selected(case, False)
            ]
            session.deselected += len(items)
            session.deselected_items += items

    def _session_status(self) -> int:
        """The ``exitstatus`` the conftests' ``pytest_sessionfinish`` hooks get: pytest's status of the run so
        far (exit_status.py; only a pytest suite has such hooks), the whole run's in the ``--parallel`` worker
        that ends it."""
        from rt_testrunner.exit_status import exit_status

        counts = self.counts
        if self.whole_run is not None:
            counts = {status: 0 for status in TestStatus}
            for event in self.whole_run:
                counts[event.status] += 1
            counts[TestStatus.ERROR] += self.whole_run_load_errors
        return exit_status(
            failed=bool(counts[TestStatus.FAIL] or counts[TestStatus.ERROR]),
            tests=sum(counts.values()) - counts[TestStatus.ERROR],
            interrupted=self.recorder.interrupted or self.collection_stopped,
            exit_code=self.recorder.exit_code,
            pytest_suite=True,
        )

    def _collection_failed(self, files: Sequence[TestFile]) -> bool:
        """A pytest-style file failed to import (or to be collected): pytest then runs no test at all
        ("Interrupted: N errors during collection") unless given ``--continue-on-collection-errors``.

        A file of the spec's own patterns (``x_test.py``) in a project with no pytest configuration and no
        conftest.py keeps the reference runtime's behaviour: one error, and the other files run. A file a
        conftest.py's collector (``pytest_collect_file``) fails on, or whose sub-collector fails, stops the
        run as a test module's import error does: pytest makes no difference between its collectors."""
        if self.session.pyconfig.continue_on_collection_errors:
            return False
        pytest_project = (
            self.session.pyconfig.inifile is not None
            or bool(self.session.broken_conftests)
            or any(module is not None for module in self.session.conftests.values())
        )
        for test_file in files:
            raised = self._collected.get(test_file.path)
            if isinstance(raised, Suite):
                if any(outcomes.classify(exc) is not outcomes.Kind.SKIP for _, exc in _node_errors(raised)):
                    return True
            if not isinstance(raised, BaseException) or outcomes.classify(raised) is outcomes.Kind.SKIP:
                continue
            if pytest_project or not test_file.path.name.endswith(SUFFIXES):
                return True
        return False

    async def _report_collection(
        self, order: Iterable[TestFile | FilePart | Segment], one_process: bool
    ) -> None:
        """The run stopped after collection: each file that failed to collect reports its error (a module
        that skipped itself its skip, as pytest counts both), and no test runs. A ``--parallel`` worker
        answers each file handed to it, with an empty file when it has nothing to report."""
        self.collection_stopped = True
        for item in order:
            test_file = item if isinstance(item, TestFile) else item.file
            collected = self._collected.get(test_file.path)
            if isinstance(collected, BaseException):
                await self._run_file(test_file)
            elif isinstance(collected, Suite) and _node_errors(collected):
                self.recorder.emit(FileStarted(test_file.relative))
                self._report_node_errors(collected, test_file)
                self.recorder.emit(FileFinished(test_file.relative, 0.0, None))
            elif not one_process:
                self.recorder.emit(FileStarted(test_file.relative))
                self.recorder.emit(FileFinished(test_file.relative, 0.0, None))
        if one_process:
            self.recorder.interrupt()

    def _report_node_errors(self, root: Suite, test_file: TestFile) -> None:
        """The collection errors of nodes inside a file that otherwise collected (a pytest test class whose
        collection failed), each a result of its own under the node's path, as pytest reports
        ``ERROR test_x.py::TestA``; a class that skipped itself while collected is a skip."""
        for path, exc in _node_errors(root):
            if outcomes.classify(exc) is outcomes.Kind.SKIP:
                finished = TestFinished(
                    test_file.relative, path, TestStatus.SKIP, 0.0, reason=outcomes.reason(exc)
                )
            else:
                failure = _rendered(exc, self.options.root)
                failure = attrs.evolve(failure, details=f"error at collection: {failure.details}")
                finished = TestFinished(test_file.relative, path, TestStatus.ERROR, 0.0, failure=failure)
                self.session.testsfailed += 1  # a failed collect report, which pytest's session counts too
            self.recorder.record(finished)

    def collecting(self, test_file: TestFile) -> None:
        """About to import ``test_file`` before the run (a ``--parallel`` worker tells the main process, so a
        crash while importing names the file)."""

    def _load(self, test_file: TestFile, run: int, part: bool = False) -> Suite:
        # a file run in parts may come back to this process for another part: its suite is kept
        collected = (
            (self._collected.get if part else self._collected.pop)(test_file.path, None) if run == 1 else None
        )
        if isinstance(collected, BaseException):
            raise collected
        if collected is not None:
            return collected
        with collect.warnings_while_collecting(self.session):
            return collect.load_file(test_file, self.session, reload=run > 1)

    def _doctest_collector_too(self, test_file: TestFile) -> bool:
        """With ``--doctest-modules`` pytest collects a test module twice, for its doctests and for its tests:
        a module that does not import is then two collection errors (or skips), one per collector."""
        pyconfig = self.session.pyconfig
        return (
            pyconfig.doctest_modules
            and not (test_file.doctest_only or test_file.doctest_text)
            and test_file.path.name not in ("setup.py", "__main__.py")
            and any(python_file_matches(str(test_file.path), p) for p in pyconfig.python_files)
        )

    def _doctest_import_ignored(self, exc: BaseException) -> bool:
        """``--doctest-ignore-import-errors``: the doctests' collector skips a module that does not import."""
        return self.session.pyconfig.doctest_ignore_import_errors and isinstance(exc, ImportError)

    async def _run_file(
        self,
        test_file: TestFile,
        span: tuple[int, int] | None = None,
        leaving: Path | None = None,
        ends_run: bool = False,
        segment: Segment | None = None,
    ) -> None:
        """Run a file's tests (``span``: only its top-level children from ``start`` up to ``stop``; ``segment``:
        only the tests of that segment of the session's order); then end the package scopes that do not hold
        ``leaving``, the next file to run (``None``: the last one, or a worker's next one, not known yet); the
        file that ``ends_run`` (the last of a one-process run) tears the package and session fixtures down
        after its own scopes."""
        exiting.restore_collector()  # a file of rt's patterns, imported when its turn comes, or a worker's
        started = clock.perf_counter()
        collected = self._collected.get(test_file.path)
        if isinstance(collected, Suite) and collected.flags is collect.IGNORED:
            self.not_collected.add(test_file.relative)  # a --parallel worker: the main process hides it
        self.recorder.emit(FileStarted(test_file.relative))
        error: TestFailure | None = None
        for run in range(1, self.options.rerun_each + 1):
            if self.bailed:
                break
            try:
                root = (
                    self._load(test_file, run, span is not None) if segment is None else _turn_root(segment)
                )
            except BaseException as exc:  # a test file's error of any kind is a result
                if isinstance(exc, GeneratorExit):
                    raise
                kind = outcomes.classify(exc)
                doctests_too = self._doctest_collector_too(test_file)
                if kind is outcomes.Kind.SKIP and getattr(exc, "allow_module_level", True) is False:
                    # pytest.skip() at import without allow_module_level=True: pytest's collection error
                    exc = RuntimeError(outcomes.MODULE_LEVEL_SKIP)
                    kind = outcomes.Kind.OTHER
                if kind is outcomes.Kind.SKIP:  # pytest.skip(allow_module_level=True), importorskip
                    # pytest counts a skipped module as one skipped test (and its doctests' collector as one)
                    skipped = TestFinished(
                        test_file.relative,
                        (test_file.path.name,),
                        TestStatus.SKIP,
                        0.0,
                        reason=outcomes.reason(exc),
                    )
                    for _ in range(2 if doctests_too else 1):
                        self.recorder.record(skipped)
                    break
                error = _rendered(exc, self.options.root)
                # each failed collect report (the doctests' collector's too) is one of pytest's testsfailed
                self.session.testsfailed += 1 + (doctests_too and not self._doctest_import_ignored(exc))
                if doctests_too:
                    ignored = self._doctest_import_ignored(exc)
                    self.recorder.record(
                        TestFinished(
                            test_file.relative,
                            (test_file.path.name,),
                            TestStatus.SKIP if ignored else TestStatus.ERROR,
                            0.0,
                            failure=None if ignored else error,
                            reason=f"unable to import module {test_file.relative!r}" if ignored else "",
                        )
                    )
                # a file that failed to load is not a test: an error, as pytest counts a collection error
                self.counts[TestStatus.ERROR] += 1
                if isinstance(exc, KeyboardInterrupt) or kind is outcomes.Kind.EXIT:
                    self.recorder.interrupt(reason=outcomes.interrupt_reason(exc))  # status 2, as pytest
                break
            whole = root if segment is None else segment.whole
            only_mode = self.options.only or any(t.has("only") for t in (whole or root).tests())
            if whole is not None and run == 1 and (span is None or span[0] == 0):  # left-out tests count once
                self._told_deselected.add(test_file.path)
                left_out = [t for t in whole.tests() if not self.schedule.selected(t, False)]
                self.filtered_out += len(left_out)
                pytest_items = [t.item for t in left_out if t.item is not None]
                if pytest_items:
                    from rt_testrunner.pyruntest import tell_deselected

                    tell_deselected(pytest_items)
                self._report_node_errors(whole, test_file)
            if segment is None and (
                self.session.teardown_hooks or self.session.named_hooks.get("pytest_runtest_protocol")
            ):
                self._link_next_items(root, test_file, only_mode, span)
            await self._run_suite(root, [self.preload_root], test_file, run, only_mode, span)
        if leaving is not None and not self.bailed:
            await self._leave_packages(test_file, leaving)
        elif ends_run and self.session.scopes.by_scope:
            await self._end_session_scopes(test_file)
        self._release_held()
        self.recorder.emit(FileFinished(test_file.relative, clock.perf_counter() - started, error))

    async def _end_session_scopes(self, test_file: TestFile) -> None:
        """Tear the package and session fixtures down at the end of the run's last file, as its scopes are:
        what their teardown writes joins the report of the run's last test when that test failed, as pytest
        shows it; a teardown that fails is an error at that test's teardown."""
        ending = Suite(None)
        ending.hooks["after_all"].append(self._session_teardown)
        await self._after_all(ending, test_file)

    def _link_next_items(
        self, root: Suite, test_file: TestFile, only_mode: bool, span: tuple[int, int] | None
    ) -> None:
        """Each pytest test of the file learns the test that runs after it (pytest's ``nextitem``, which
        protocol and teardown hooks get; retry code passes it on), in the order :meth:`_run_suite` runs them."""
        ordered = self._pytest_cases(root, test_file, only_mode, span)
        # the last one's is the next file's first test in one process (under --parallel: unknown, None)
        after = self._following.get(test_file.path)
        collected = self._collected.get(after.path) if after is not None else None
        if after is not None and isinstance(collected, Suite):
            only = self.options.only or any(t.has("only") for t in collected.tests())
            ordered += self._pytest_cases(collected, after, only, None)[:1]
        for index, case in enumerate(ordered):
            if case.item is not None:
                case.item.next_item = ordered[index + 1].item if index + 1 < len(ordered) else None
                case.item.next_known = True

    def _pytest_cases(
        self, root: Suite, test_file: TestFile, only_mode: bool, span: tuple[int, int] | None
    ) -> list[TestCase]:
        """The file's selected pytest tests, in the order :meth:`_run_suite` runs them."""
        ordered: list[TestCase] = []

        def walk(suite: Suite, top: bool) -> None:
            children = self.schedule.ordered(suite, test_file.relative)
            for child in children[span[0] : span[1]] if top and span is not None else children:
                if isinstance(child, Suite):
                    walk(child, False)
                elif child.item is not None and self.schedule.selected(child, only_mode):
                    ordered.append(child)

        walk(root, True)
        return ordered

    # -- suites ------------------------------------------------------------------------------------------------

    async def _run_suite(
        self,
        suite: Suite,
        chain: list[Suite],
        test_file: TestFile,
        run: int,
        only_mode: bool,
        span: tuple[int, int] | None = None,
    ) -> None:
        schedule = self.schedule
        tests: list[TestCase] | list[TestCase | Suite]
        if span is None:
            tests = suite.tests()
        else:
            tests = schedule.ordered(suite, test_file.relative)[span[0] : span[1]]  # a file of test functions
        selected = [t for t in tests if isinstance(t, TestCase) and schedule.selected(t, only_mode)]
        if not selected:
            return
        executes = any(schedule.will_execute(t) for t in selected)
        chain = [*chain, suite]
        if executes:
            error = await self.executor.hooks(suite, "before_all", deadline_ms=self.options.timeout_ms)
            if error is not None:
                self._release_held()
                self.recorder.hook_failure(
                    suite, "before_all", error, test_file.relative, self.options.timeout_ms
                )
                await self._after_all(suite, test_file)
                return
        group: list[TestCase] = []
        children = schedule.ordered(suite, test_file.relative)
        for child in children if span is None else children[span[0] : span[1]]:
            if self.bailed:
                break
            if isinstance(child, TestCase):
                if not schedule.selected(child, only_mode):
                    continue
                if schedule.is_concurrent(child) and schedule.will_execute(child):
                    group.append(child)
                    continue
            await self._run_group(group, chain, test_file, run)
            group = []
            if isinstance(child, Suite):
                await self._run_suite(child, chain, test_file, run, only_mode)
            else:
                await self._run_test(child, chain, test_file, run)
        await self._run_group(group, chain, test_file, run)
        if executes:
            await self._after_all(suite, test_file)

    async def _leave_packages(self, test_file: TestFile, following: Path) -> None:
        """pytest tears a package's fixtures down in the teardown of the package's last test, when the run
        leaves the package: a package whose fixtures hold a resource (a server on a fixed port, a database,
        a patched global) gives it back before the next package's fixtures take theirs. Their output and
        errors go with this file's last test, as a module's do. After the last file they end with the
        session, before the session's fixtures."""
        ending = [
            key
            for key in self.session.scopes.by_scope
            if key[0] == "package" and key[1] is not None and not _inside(following, key[1])
        ]
        if not ending:
            return
        packages = Suite(None)
        for key in reversed(ending):  # the innermost, set up last, first
            packages.hooks["after_all"].append(
                ScopeTeardown(functools.partial(self.session.scopes.finish, key))
            )
        await self._after_all(packages, test_file)

    async def _after_all(self, suite: Suite, test_file: TestFile) -> None:
        written: list[str] = []
        error = await self.executor.hooks(
            suite, "after_all", deadline_ms=self.options.timeout_ms, written=written
        )
        if written and self._held is not None:
            self._held = _with_teardown_output(self._held, written)
        if error is not None:
            self._after_all_failed(suite, error, test_file.relative)

    def _release_held(self) -> None:
        """Record the failed test held for its scopes' teardown output (:attr:`_held`), if any."""
        held, self._held = self._held, None
        if held is not None:
            self.recorder.record(held)

    def _after_all_failed(self, suite: Suite, error: Outcome, file: str) -> None:
        """An ``after_all`` hook failed. Tearing down a pytest scope is pytest's error at the teardown of the
        scope's last test, with what the teardown wrote; any other hook is a failure of its own."""
        self._release_held()
        last = self._last_test
        if not error.scope_teardown or last is None:
            self.recorder.hook_failure(suite, "after_all", error, file, self.options.timeout_ms)
            return
        case, last_file = last
        failure = self.recorder.failure(error, self.options.timeout_ms)
        if error.captured:
            failure = attrs.evolve(failure, details=f"{failure.details}\n{error.captured}")
        self.recorder.record(
            TestFinished(
                last_file,
                (*case.path[:-1], f"{case.name} [teardown]"),
                TestStatus.ERROR,
                0.0,
                failure=failure,
                location=failure.location,
                output=error.captured,
                suite_lines=case.suite.lines,
            )
        )

    async def _run_group(
        self, group: list[TestCase], chain: list[Suite], test_file: TestFile, run: int
    ) -> None:
        """Consecutive concurrent tests run together, at most ``--max-concurrency`` at once."""
        if not group:
            return
        sync_cases, async_cases = split_group(group)
        for case in sync_cases:
            await self._run_test(case, chain, test_file, run)
        if len(async_cases) == 1:
            await self._run_test(async_cases[0], chain, test_file, run)
        elif MAIN_THREAD.get() is not None:
            await self._run_group_in_loop(async_cases, chain, test_file, run)
        elif async_cases:
            self.executor.in_loop(self._run_group_in_loop, async_cases, chain, test_file, run)

    async def _run_group_in_loop(
        self, group: list[TestCase], chain: list[Suite], test_file: TestFile, run: int
    ) -> None:
        import anyio

        if self.limiter is None:
            self.limiter = anyio.CapacityLimiter(self.options.max_concurrency or math.inf)
        limiter = self.limiter

        async def limited(case: TestCase) -> None:
            async with limiter:
                if not self.bailed:
                    await self._run_test(case, chain, test_file, run, grouped=True)

        async with anyio.create_task_group() as group_tasks:
            for case in group:
                group_tasks.start_soon(limited, case)

    def echo(self, out_text: str, err_text: str) -> None:
        """An rt-style test's captured output, printed after it as the reference runtime prints it."""
        out, err = self._real_streams
        out.write(out_text)
        out.flush()
        err.write(err_text)
        err.flush()

    # -- one test ----------------------------------------------------------------------------------------------

    async def _run_test(
        self, case: TestCase, chain: list[Suite], test_file: TestFile, run: int, grouped: bool = False
    ) -> None:
        """One test, retried as configured. A pytest-style test's output is captured and shown with its
        failure (pytest's behaviour); an ``rt.test`` test prints as it runs (the spec's), except in a
        concurrent group, where its output is collected and written in one piece when it ends, so that
        tests running at the same time do not interleave their lines."""
        self._release_held()
        if self.bailed:
            return
        self._last_test = (case, test_file.relative)
        recorder = self.recorder
        location = recorder.location(case.location)
        run_label = run if self.options.rerun_each > 1 else 1
        if not self.schedule.will_execute(case):
            status = TestStatus.SKIP if case.has("skip") else TestStatus.TODO
            recorder.record(
                TestFinished(
                    test_file.relative,
                    case.path,
                    status,
                    0.0,
                    run=run_label,
                    suite_lines=case.suite.lines,
                    location=location,
                )
            )
            return
        retries = case.retry if case.retry is not None else self.options.retry
        timeout_ms = case.timeout or self.options.timeout_ms
        if case.item is not None and case.timeout is None and not self.options.explicit_timeout:
            timeout_ms = NO_TIMEOUT_MS
        attempt = 1
        earlier: list[TestFailure] = []  # each failed attempt's error is printed (REFERENCE.md)
        while True:
            recorder.emit(TestStarted(test_file.relative, case.path, attempt, run_label))
            started = clock.perf_counter()
            outcome = await self.executor.attempt(case, chain, timeout_ms, case.item is not None or grouped)
            duration = clock.perf_counter() - started
            status, failure, reason = recorder.judge(case, outcome, timeout_ms)
            # a pytest test's set-up error is retried too, as pytest-rerunfailures reruns any failed phase
            retried = status is TestStatus.FAIL or (case.item is not None and status is TestStatus.ERROR)
            teardown_failed = case.item is not None and self._teardown_failed(outcome, timeout_ms)
            teardown_only = teardown_failed and not retried
            if not (retried or teardown_only) or attempt > retries:
                break
            if case.item is not None and self._rerun_refused(case, outcome, retried, teardown_failed):
                break
            if failure is not None:
                earlier.append(failure)
            elif teardown_only:
                # pytest-rerunfailures logs the attempt's call report before the teardown's it reruns for:
                # a result of its own, as pytest counts and lists it (3 passed, 1 rerun for 2 tests)
                recorder.record(
                    _attempt_result(
                        test_file,
                        case,
                        outcome,
                        (status, None, reason),
                        duration,
                        (attempt, run_label, location),
                    )
                )
            attempt += 1
            if case.item is not None:
                # the plugin logs every failed report of the attempt it reruns as a rerun: a failed set-up or
                # call and then a failed teardown are two
                recorder.reruns += 1 + (retried and teardown_failed)
        quiet_subtests = (outcome.subtests_passed or outcome.subtests) and self._subtests_quiet()
        if not quiet_subtests:
            recorder.subtests_passed += outcome.subtests_passed
        recorder.reruns += outcome.reruns_logged
        for category, reason, text in outcome.logged_earlier:
            recorder.record(_logged_result(test_file, case, _LOGGED_STATUS[category], reason, text, location))
        if outcome.categories_logged:
            recorder.add_categories(outcome.categories_logged)
        if case.item is not None:
            self.session.testsfailed += (status in (TestStatus.FAIL, TestStatus.ERROR)) + (
                outcome.teardown_error is not None and status is not TestStatus.XFAIL
            )
            self._stop_when_asked(recorder)
        if case.item is not None and outcomes.interrupt_reason(outcome.error) is not None:
            # pytest.exit() in a pytest-style test: pytest reports no result for that test, only the reason
            # the run stopped (in the summary) and its returncode
            recorder.interrupt(outcomes.exit_code(outcome.error), outcomes.interrupt_reason(outcome.error))
            return
        finished = _attempt_result(
            test_file,
            case,
            outcome,
            (status, failure, reason),
            duration,
            (attempt, run_label, location),
            tuple(earlier),
        )
        interrupted = isinstance(outcome.error, KeyboardInterrupt) or (
            outcome.error is not None and outcomes.classify(outcome.error) is outcomes.Kind.EXIT
        )
        if failure is not None and case.item is not None and not grouped and not interrupted:
            if not outcome.subtests and outcome.teardown_error is None:
                # held until the next test or the end of its scopes (_after_all): the last test of a module
                # or class shows what the scope's teardown wrote
                self._held = finished
                return
        recorder.record(finished)
        for subtest in outcome.subtests:
            # pytest 9 reports each subtest that did not pass as a result of its own (subtests.py)
            sub_status, sub_failure, sub_reason = recorder.judge(
                case, Outcome(error=subtest.error), timeout_ms
            )
            recorder.record(
                TestFinished(
                    test_file.relative,
                    (*case.path[:-1], f"{case.name} {subtest.description}"),
                    sub_status,
                    0.0,
                    run=run_label,
                    failure=sub_failure,
                    location=location,
                    reason=sub_reason,
                    suite_lines=case.suite.lines,
                    subtest_of=case.name,
                    counted=not (quiet_subtests and sub_status in (TestStatus.SKIP, TestStatus.XFAIL)),
                )
            )
        if case.item is None and outcome.capture is not None:
            self.echo("".join(outcome.capture.out), "".join(outcome.capture.err))
        if outcome.teardown_error is not None:
            # pytest reports a failed teardown as a result of its own, next to the test's: an error, or an
            # expected failure of a test marked xfail
            teardown_status, teardown, teardown_reason = recorder.judge_teardown(outcome, timeout_ms)
            recorder.record(
                TestFinished(
                    test_file.relative,
                    (*case.path[:-1], f"{case.name} [teardown]"),
                    teardown_status,
                    0.0,
                    failure=teardown,
                    location=location,
                    reason=teardown_reason,
                )
            )
        if interrupted:
            recorder.interrupt(outcomes.exit_code(outcome.error))

    def _teardown_failed(self, outcome: Outcome, timeout_ms: int) -> bool:
        """A pytest test's teardown failed as its report says: an error, not the expected failure of a test
        marked xfail nor a skip. pytest-rerunfailures reruns the test for it whatever the call's report was,
        an imperative ``pytest.xfail()``'s too (its teardown report has no ``wasxfail``)."""
        return (
            outcome.teardown_error is not None
            and self.recorder.judge_teardown(outcome, timeout_ms)[0] is TestStatus.ERROR
        )

    def _rerun_refused(
        self, case: TestCase, outcome: Outcome, call_failed: bool, teardown_failed: bool
    ) -> bool:
        """pytest-rerunfailures' ``--only-rerun``/``--rerun-except`` refuse to rerun this attempt of a pytest
        test for the error of its failed set-up or call (``call_failed``) or of its failed teardown."""
        from rt_testrunner.reruns import rerun_refused

        errors = [outcome.error] if call_failed else []
        if teardown_failed:
            errors.append(outcome.teardown_error)
        assert case.item is not None
        return rerun_refused(self.session.config, case.item.node, errors)

    def _subtests_quiet(self) -> bool:
        """pytest 9.2's subtests plugin counts the subtests that pass ("5 subtests passed") and those that skip
        or fail as expected only when the subtests' verbosity (``verbosity_subtests``, else ``-v``/``-q``) is
        not 0: a plain ``pytest`` run leaves them out of its summary, ``-q`` and ``-v`` count them; a failed
        subtest counts at every verbosity, and the JUnit report has them all. Asked only for a test that had
        subtests (a plugin's ``pytest_configure`` may change the verbosity)."""
        return int(self.session.config.get_verbosity("subtests")) == 0

    def _stop_when_asked(self, recorder: Recorder) -> None:
        """A plugin's or conftest.py's ``session.shouldfail`` or ``session.shouldstop`` (pytest's stepwise, a
        ``pytest_runtest_makereport`` hook that ends the run): no further test starts, as pytest's run loop
        stops after the test that set it, with its line and status (1 for ``shouldfail``, pytest's
        ``Failed``; 2 for ``shouldstop``, its ``Interrupted``; 3 for a hook that raised where pytest's run ends in
        an INTERNALERROR)."""
        session = self.session
        if session.shouldfail:
            recorder.interrupt(1, str(session.shouldfail))
        elif session.shouldstop:
            recorder.interrupt(2, f"Interrupted: {session.shouldstop}")
        elif session.hook_error is not None:
            recorder.interrupt(3, f"INTERNALERROR: {session.hook_error}")


def _attempt_result(
    test_file: TestFile,
    case: TestCase,
    outcome: Outcome,
    judged: tuple[TestStatus, TestFailure | None, str],
    duration: float,
    attempt: tuple[int, int, Location | None],
    earlier: tuple[TestFailure, ...] = (),
) -> TestFinished:
    """The result of a test's attempt as judged (status, failure, reason), with the attempt's number, the
    run's and where the test is shown: its last one, or one that pytest-rerunfailures logs before rerunning
    the test for its teardown."""
    status, failure, reason = judged
    number, run_label, location = attempt
    return TestFinished(
        test_file.relative,
        case.path,
        status,
        duration,
        number,
        run_label,
        failure,
        location,
        outcome.expect_calls,
        output=outcome.captured,
        reason=reason,
        earlier_failures=earlier,
        suite_lines=case.suite.lines,
        subtests_passed=outcome.subtests_passed,
        properties=_properties(case),
        at_setup=outcome.setup_error,
        own_style=case.item is None,
    )


#: the status of each category pytest's terminal counts a logged report in
_LOGGED_STATUS = {
    "passed": TestStatus.PASS,
    "failed": TestStatus.FAIL,
    "error": TestStatus.ERROR,
    "skipped": TestStatus.SKIP,
    "xfailed": TestStatus.XFAIL,
    "xpassed": TestStatus.XPASS,
}


def _logged_result(
    test_file: TestFile, case: TestCase, status: TestStatus, reason: str, text: str, location: Location | None
) -> TestFinished:
    """A result of a report a plain ``pytest_runtest_protocol`` logged before the test's last ones."""
    from rt_testrunner.failures import plain_failure

    failure = plain_failure(text or "failed", "ReportedFailure", location) if status in _FAILED else None
    return TestFinished(
        test_file.relative,
        case.path,
        status,
        0.0,
        failure=failure,
        location=location,
        reason=reason,
        suite_lines=case.suite.lines,
    )


_FAILED = (TestStatus.FAIL, TestStatus.ERROR)


def _in_files_order(files: Sequence[TestFile], collected: dict[Path, Any], items: Sequence[Any]) -> bool:
    """``items`` (``session.items``) run in the files' order, each file's tests in its tree's order: the common
    case, checked in one pass without importing session_order.py. A file with an rt-style test keeps it."""
    expected = iter(items)
    for test_file in files:
        root = collected.get(test_file.path)
        if isinstance(root, Suite):
            for case in root.tests():
                if case.item is None:
                    return True
                if next(expected, None) is not case.item.node:
                    return False
    return True


def _with_teardown_output(finished: TestFinished, written: list[str]) -> TestFinished:
    """A failed test's result with what its scopes' teardown wrote, in its captured sections (shown under
    the failure, ``Recorder.judge``, and in the reports' output)."""
    from rt_testrunner.capture import merge_sections

    output = merge_sections(finished.output, *written)
    failure = finished.failure
    if failure is not None:
        details = failure.details
        if finished.output and details.endswith(finished.output):
            details = details[: -len(finished.output)].rstrip("\n")
        failure = attrs.evolve(failure, details=f"{details}\n{output}")
    return attrs.evolve(finished, output=output, failure=failure)


def _properties(case: TestCase) -> tuple[tuple[str, str], ...]:
    """What the test recorded with ``record_property`` (its node's ``user_properties``), as text."""
    node = getattr(case.item, "node", None)
    recorded = getattr(node, "user_properties", None)
    if not recorded:
        return ()
    return tuple((str(name), str(value)) for name, value in recorded)


def _node_errors(root: Suite) -> list[tuple[tuple[str, ...], BaseException]]:
    """The collection errors of nodes inside a file (:attr:`Suite.collect_errors`), none for most files."""
    return root.collect_errors or []


class CollectionMismatch(Exception):
    """A ``--parallel`` worker that collected the suite for itself lacks a test of the turn it is handed."""

    def __init__(self, nodeid: str) -> None:
        super().__init__(
            f"different tests were collected in this worker than in the first one ({nodeid} is not among"
            " them): the suite's collection differs from one process to the next, so this turn's tests did not"
            " run (as pytest-xdist's 'Different tests were collected')"
        )


def _turn_root(segment: Segment) -> Suite:
    """The tree of a turn's tests; the turn's error when this worker does not have them."""
    if segment.error is not None:
        raise segment.error
    return segment.root


def _rendered(exc: BaseException, root: Path) -> TestFailure:
    """A load or preload error as a failure; :mod:`rt_testrunner.failures` is imported only when one
    happens (a passing run never does). A turn this worker's collection lacks is rt's own error: one plain
    line, without its class's dotted name or rt's frames."""
    from rt_testrunner.failures import plain_failure, render_exception

    if isinstance(exc, CollectionMismatch):
        return plain_failure(str(exc), "CollectionMismatch")
    return render_exception(exc, root)
