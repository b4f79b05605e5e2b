"""A ``rt test --parallel`` worker: ``python -m rt_testrunner.worker READ_FD WRITE_FD``, or a fork of the zygote.

Why not a fork of the main process: a forked child would inherit whatever the main process holds (its
imported modules, threads that do not survive a fork, open event loops, the kernel's plugin state), and
``fork`` does not exist on Windows while macOS warns against it; a fresh ``python -m`` process starts the same
on every system and begins from what a one-process ``rt test`` begins from. Where ``fork`` is safe, the
workers are forked from a zygote instead (:mod:`rt_testrunner.zygote`): a fresh interpreter that holds none
of that (it imported rt and built a kernel of its own, nothing else), so a worker starts from the same state without paying
the start-up again; it then runs :func:`run` as a fresh worker does (the same interpreter, environment,
working directory and ``sys.path`` rules). The pipes are passed as inherited descriptors (``pass_fds``, POSIX). The main process has already parsed
and validated the command line, so the worker receives the resulting :class:`~rt_testrunner.wire.WorkerSetup`
instead of re-reading it.

The worker runs the ordinary :class:`~rt_testrunner.runner.Runner`: it collects every file of the run (as a
one-process run and pytest-xdist's workers do, so suites that rely on whole-session collection behave the
same), or starts from the run its zygote collected before forking it (:func:`collect_in_zygote`), then runs the files the main process hands it, one at a time, and forwards every event. Session-scoped
fixtures, ``--preload`` scripts and the preload's ``before_all``/``after_all`` hooks therefore run once per
worker (as in pytest-xdist). Snapshots are checked and written here, file by file (a file runs in one worker
only); coverage is measured here and saved for the main process to combine.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from rt.events import FileFinished, RunFinished, RunStarted, SnapshotCounts, TestEvent
from rt_testrunner import pywarnings, wire
from rt_testrunner.runner import FilePart, Runner

if TYPE_CHECKING:
    from rt.kernel import Kernel


class _Forwarder:
    """The worker's only reporter: every event goes to the main process (a file's end with its extras)."""

    def __init__(self, channel: wire.Channel, session: Any) -> None:
        self.channel = channel
        self.session = session  # the SnapshotSession (its counts are sent per file)
        self.runner: WorkerRunner | None = None
        self._sent_filtered = 0
        self._sent_snapshots = SnapshotCounts()
        self._sent_obsolete = 0
        self._sent_reruns = 0
        self._sent_subtests = 0
        self._sent_warnings = 0
        self._sent_listed = 0
        self._sent_collection = False
        self._sent_properties = 0

    def handle(self, event: TestEvent) -> None:
        if isinstance(event, RunStarted | RunFinished):
            return  # the main process announces and sums up the run
        if not isinstance(event, FileFinished):
            self.channel.send((wire.EVENT, event))
            return
        runner = self.runner
        assert runner is not None
        counts = self.session.counts()
        names = self.session.obsolete_names
        done = wire.FileDone(
            filtered_out=runner.filtered_out - self._sent_filtered,
            snapshots=_minus(counts, self._sent_snapshots),
            obsolete=tuple(names[self._sent_obsolete :]),
            interrupted=runner.recorder.interrupted,
            reruns=runner.recorder.reruns - self._sent_reruns,
            categories=tuple(runner.recorder.categories.items()),
            collection_stopped=runner.collection_stopped,
            exit_code=runner.recorder.exit_code,
            interrupt_reason=runner.recorder.interrupt_reason,
            not_collected=event.file in runner.not_collected,
            subtests_passed=runner.recorder.subtests_passed - self._sent_subtests,
            warnings=pywarnings.recorded("tests") - self._sent_warnings,
            collection_warnings=None if self._sent_collection else pywarnings.recorded("collect"),
            warning_list=pywarnings.listed("tests", self._sent_listed),
            collection_warning_list=() if self._sent_collection else pywarnings.listed("collect"),
            testsuite_properties=runner.session.suite_properties(self._sent_properties),
            reports=tuple(runner.session.report_log or ()),
        )
        if runner.session.report_log:
            runner.session.report_log.clear()
        self._sent_properties = len(runner.session.testsuite_properties)
        self._sent_warnings = pywarnings.recorded("tests")
        self._sent_listed = len(pywarnings.listed("tests"))
        self._sent_collection = True
        self._sent_filtered = runner.filtered_out
        self._sent_reruns = runner.recorder.reruns
        runner.recorder.categories.clear()  # sent: each file's counts once
        self._sent_subtests = runner.recorder.subtests_passed
        self._sent_snapshots = counts
        self._sent_obsolete = len(names)
        self.channel.send((wire.FILE, event, done))

    def close(self) -> None:
        pass


def _minus(a: SnapshotCounts, b: SnapshotCounts) -> SnapshotCounts:
    return SnapshotCounts(
        a.passed - b.passed,
        a.failed - b.failed,
        a.written - b.written,
        a.updated - b.updated,
        a.obsolete - b.obsolete,
        a.removed - b.removed,
        a.files_removed - b.files_removed,
    )


class WorkerRunner(Runner):
    """The runner, with an rt-style test's echoed output sent to the main process to print in its turn."""

    channel: wire.Channel

    def collecting(self, test_file: Any) -> None:
        self.channel.send((wire.COLLECTING, test_file.relative))

    def echo(self, out_text: str, err_text: str) -> None:
        if out_text or err_text:
            self.channel.send((wire.ECHO, out_text, err_text))


def _requested(channel: wire.Channel, files: Sequence[Any], runner: Runner) -> Iterator[Any]:
    """The files (or parts of files) the main process hands out, until it says stop (or is gone)."""
    # collecting is over: a crash from here on is a file's, not the session's. The session's end reads the
    # run's results when a plugin or conftest.py has a terminal summary or unconfigure hook
    named = getattr(runner.session, "named_hooks", {})
    wants = bool(named.get("pytest_terminal_summary") or named.get("pytest_unconfigure"))
    if runner.session.logreport_hooks or named.get("pytest_warning_recorded"):
        # a report plugin: the last worker gives it the others' reports (and tests' warnings) too
        wants = True
        runner.session.report_log = []
    channel.send((wire.READY, wants))
    while not runner.bailed:
        try:
            message = channel.recv()
        except EOFError:
            return
        if message[0] != wire.RUN:
            if len(message) > 1:  # the last worker: it ends the session with the whole run's results
                runner.whole_run = list(message[1])
                runner.summary = True
                runner.replayed = list(message[2]) if len(message) > 2 else []
                runner.whole_run_warnings = message[3] if len(message) > 3 else None
                runner.whole_run_load_errors = message[4] if len(message) > 4 else 0
            return
        if len(message) == 4 and isinstance(message[2], tuple):  # a turn of the session's order (node ids)
            yield runner.segment(files[message[1]], message[2], message[3])
        elif len(message) == 4:  # some of the file's tests
            yield FilePart(files[message[1]], message[2], message[3])
        else:
            yield files[message[1]]


@attrs.define
class Prepared:
    """A worker's run, built from its set-up before it takes its first file: in the worker itself, or in the
    zygote, which then collects the files too and forks the workers from there (:func:`collect_in_zygote`)."""

    kernel: Kernel
    setup: wire.WorkerSetup
    session: Any  # the SnapshotSession
    coverage: Any  # the CoverageSession, or None
    forwarder: _Forwarder
    runner: WorkerRunner


def prepare(setup: wire.WorkerSetup, kernel: Kernel, channel: wire.Channel) -> Prepared:
    """Everything the worker's run needs, in the state a one-process run has before it collects."""
    from rt.kernel import use_kernel
    from rt_testrunner import snapshots
    from rt_testrunner.command import prepare_sys_path

    options = setup.options
    if setup.backend_override:
        kernel.with_overrides({"backend": setup.backend_override})
    if setup.temp_folder is not None:
        from rt_testrunner.temp_paths import share_run_folder

        share_run_folder(Path(setup.temp_folder))
    with use_kernel(kernel):
        prepare_sys_path(options.pyconfig, options.root)
        session = snapshots.SnapshotSession(
            options.root, setup.snapshot_update, setup.snapshot_ci, setup.snapshot_full_run
        )
        snapshots.SESSION = session
        coverage = None
        if setup.coverage is not None:
            from rt_testrunner.coverage_run import CoverageSession

            coverage = CoverageSession(options.root, setup.coverage, data_file=setup.coverage_file)
        forwarder = _Forwarder(channel, session)
        runner = WorkerRunner(options, [session, forwarder], backend=setup.backend)
        runner.summary = False  # the last worker's only (:func:`_requested`)
        runner.channel = channel
        forwarder.runner = runner
    return Prepared(kernel, setup, session, coverage, forwarder, runner)


def collect_in_zygote(channel: wire.Channel, kernel: Kernel) -> tuple[Prepared, bool]:
    """The zygote's part of a run collected once (:mod:`rt_testrunner.zygote`): read the set-up from
    ``channel``, import every test file (telling the main process which, as a worker does), and answer
    whether the workers can be forked from here (:func:`forkable`; also returned). The workers forked
    afterwards start from the result (:func:`run`) instead of collecting again."""
    from rt.kernel import use_kernel

    setup: wire.WorkerSetup = channel.recv()
    prepared = prepare(setup, kernel, channel)
    files = list(setup.files)
    with use_kernel(kernel):
        prepared.runner.precollect(files)
        turns = prepared.runner.worker_turns(files)
        parts = prepared.runner.parts(files) if turns is None else {}
    _flush_open_files()
    can_fork = forkable()
    channel.send((wire.COLLECTED, can_fork, parts, turns, "" if can_fork else running_threads()))
    return prepared, can_fork


def _flush_open_files() -> None:
    """Write out what the test modules left in the buffers of files they opened while imported: each worker
    inherits those buffers and writes them when it ends, so text written once (as in one process) would
    otherwise be written once per worker."""
    import gc
    import io

    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    for obj in gc.get_objects():
        if isinstance(obj, io.IOBase):
            try:
                if not obj.closed:
                    obj.flush()
            except Exception:  # noqa: BLE001, S110 - a file that cannot be flushed now is left as it is
                pass


def forkable() -> bool:
    """This process runs one thread only (the test modules it imported started none, as Python sees it and,
    on Linux, as the system does: a C library's threads count too), so a fork copies a consistent state."""
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        import threading

        return threading.active_count() == 1


def running_threads() -> str:
    """The threads that keep the zygote from forking, for the line the main process prints: each Python
    thread's name and the module of what it runs (a plugin's ``pytest_configure``, a conftest.py or a test
    module started it), and how many a C library started (Linux lists them, Python does not)."""
    import threading

    described = []
    for thread in threading.enumerate():
        if thread is threading.main_thread():
            continue
        runs = getattr(thread, "_target", None) or type(thread).run
        module = getattr(runs, "__module__", None)
        described.append(f"{thread.name!r} of {module}" if module else repr(thread.name))
    try:
        others = len(os.listdir("/proc/self/task")) - 1 - len(described)
    except OSError:
        others = 0
    if others > 0:
        described.append(f"{others} started outside Python")
    return ", ".join(described) or "a thread"


def serve(channel: wire.Channel, kernel: Kernel | None = None, prepared: Prepared | None = None) -> None:
    """Run the files the main process hands out. ``kernel``: the one a zygote built before forking this
    worker (:mod:`rt_testrunner.zygote`); a fresh worker builds its own. ``prepared``: the run the zygote
    prepared and collected before forking this worker (its set-up is not sent again)."""
    # everything a run needs is imported and the kernel built before the set-up arrives: the main process
    # starts the workers first and finishes its own preparation (reporters, ...) meanwhile
    from rt.kernel import Kernel, use_kernel

    if prepared is None:
        prepared = prepare(channel.recv(), kernel if kernel is not None else Kernel(), channel)
    else:
        prepared.runner.channel = channel
        prepared.forwarder.channel = channel
    runner, coverage, files = prepared.runner, prepared.coverage, prepared.setup.files
    with use_kernel(prepared.kernel):
        if coverage is not None:
            coverage.start()
        try:
            runner.run_sync(list(files), _requested(channel, files, runner))
        finally:
            if coverage is not None:
                coverage.save()
    # only the worker that ended the session with the whole run's results speaks for the run (pytest-xdist's
    # controller), not a worker whose session saw its own tests alone
    channel.send((wire.DONE, runner.hook_exit_status if runner.whole_run is not None else None))


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2:
        print("rt_testrunner.worker: started by `rt test --parallel`, not by hand", file=sys.stderr)
        return 2
    # `python -m` put the working directory first on sys.path; the one-process `rt test` has the script's
    # folder there and adds the project root itself (prepare_sys_path), so the worker does the same
    if sys.path and sys.path[0] in ("", os.getcwd()):
        del sys.path[0]
    return run(wire.Channel(int(args[0]), int(args[1])))


def run(channel: wire.Channel, kernel: Kernel | None = None, prepared: Prepared | None = None) -> int:
    """A worker's whole life, fresh or forked; its exit status."""
    from rt_testrunner.exiting import freeze_at_exit

    freeze_at_exit()
    try:
        serve(channel, kernel, prepared)
    except (EOFError, BrokenPipeError, KeyboardInterrupt):
        return 1  # the main process is gone or stopping the run: nothing to report to
    finally:
        channel.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
