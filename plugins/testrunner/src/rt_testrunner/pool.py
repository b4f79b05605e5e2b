"""``rt test --parallel[=N]``: the main process hands test files to N worker processes and reports for them.

The main process discovers the files as a one-process run does, starts the workers
(:mod:`rt_testrunner.worker`: forked by the zygote, :mod:`rt_testrunner.zygote`, or a fresh interpreter
each where fork is unavailable), and gives each idle worker the next file over its
pipe, the slowest first when ``--timings`` knows the durations. Workers send back every event
(:mod:`rt_testrunner.wire`); the main process keeps a file's events until the file is done and then replays
them, in one block, to the same reporters, counts and ``--bail`` check a one-process run uses
(:class:`~rt_testrunner.tally.Tally`). So every reporter (console, dots, JUnit, GitHub, agent, a plugin's)
sees whole files, one after the other, in the order they finish, as the reference runtime prints them.

The run is collected once, by the zygote before it forks the workers (:meth:`Pool._collect_once`), where
that is safe; otherwise every worker imports all the files, as pytest-xdist's do. What a one-process run does
once happens once per worker: ``--preload`` scripts and session-scoped fixtures. A worker that dies (a crash,
``os._exit``) makes its current file an error that says so, and a new worker takes the remaining files.
``--bail`` and Ctrl-C stop the run: busy workers are ended, and the summary is written as usual.
"""

from __future__ import annotations

import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from rt.events import (
    FileFinished,
    FileStarted,
    RunFinished,
    RunStarted,
    TestEvent,
    TestFailure,
    TestFinished,
    TestStarted,
    TestStatus,
)
from rt.interfaces import Reporter
from rt_testrunner import pyconfig, temp_paths, wire
from rt_testrunner import timings as timing_files
from rt_testrunner.discovery import TestFile
from rt_testrunner.plan import Work, in_session_order, plan
from rt_testrunner.tally import Tally
from rt_testrunner.zygote import ForkedProcess, ForkedZygote, Zygote

_GONE = "gone"  # (GONE, return code): the worker process has exited (posted by its waiter thread)
#: a file's (or a part's) warnings, as pywarnings.listed gives them: (node id or file:line, text)
_Warnings = tuple[tuple[str, str], ...]
#: how long a dead worker's pipe may stay open (a process it forked still holds it) before it counts as gone
_PIPE_GRACE_S = 5.0


class _Worker:
    """One worker process and what the main process knows of it."""

    def __init__(
        self,
        number: int,
        process: subprocess.Popen[bytes] | ForkedProcess | ForkedZygote,
        channel: wire.Channel,
    ) -> None:
        self.number = number
        self.process = process
        self.channel = channel
        self.current: Work | None = None  # the file (or part of one) it is running
        self.started_at = 0.0
        self.block: list[tuple[Any, ...]] = []  # the current file's messages, replayed when it is done
        self.ready = False  # it collected the files (a crash before that is the collection's)
        self.collecting = ""  # the file it was importing then
        self.done = False  # it sent DONE: its session ended normally
        self.gone = False
        self.ended_by_us = False  # killed because the run stopped (bail, Ctrl-C): not a crash
        self.needs_setup = True  # False: forked from the zygote that collected the run (it has its set-up)

    def send(self, message: Any) -> bool:
        try:
            self.channel.send(message)
        except (BrokenPipeError, OSError, ValueError):
            return False  # it died; its waiter thread reports that
        return True


class Pool:
    def __init__(
        self,
        invocation: Any,
        files: Sequence[TestFile],
        reporters: Sequence[Reporter],
        snapshot_session: Any,
        coverage: Any,
        backend: str,
        backend_override: str | None,
        early: Launched | None = None,
        zygote: Zygote | None = None,
    ) -> None:
        self.invocation = invocation
        self.early = early  # the first worker, launched while the main process prepared the run
        self.zygote = zygote  # forks the workers (None: each is a fresh interpreter)
        self.first_launch = time.perf_counter() if early is None else early.at
        self.options = invocation.run
        self.files = list(files)
        self.snapshots = snapshot_session
        self.coverage = coverage
        self.recorder = Tally(reporters, self.options.root, self.options.bail)
        self.options_parallel: int = invocation.parallel
        self.size = max(1, min(invocation.parallel, len(self.files)))
        self.delay_s = invocation.parallel_delay_ms / 1000
        known = timing_files.load(invocation.timings, self.options.root)
        self.timed = bool(known)
        self.pending: deque[Work] = deque(Work(i) for i in timing_files.slowest_first(self.files, known))
        #: the parts of files cut in parts (plan.py) that are done, by file index and part, until all are
        self.parts_done: dict[int, dict[int, tuple[list[tuple[Any, ...]], FileFinished, _Warnings]]] = {}
        #: whether a worker's collection warnings were added to the count (the first to send them)
        self.collection_warnings_counted = False
        #: each worker's messages, in batches (what its pipe held when its reader thread read it)
        self.messages: queue.Queue[tuple[_Worker, list[tuple[Any, ...]]]] = queue.Queue()
        self.workers: list[_Worker] = []
        self.reported: set[str] = set()  # files already replayed (a preload error comes from every worker)
        self.outside: set[tuple[str, tuple[str, ...]]] = set()  # results outside files, reported once
        self.stopping = False
        #: a worker's session has hooks that read the run's results at its end (``pytest_terminal_summary``,
        #: ``pytest_unconfigure``): the last worker to end it gets them all (:meth:`_no_more_for`)
        self.results_wanted = False
        #: how many of ``recorder.warning_list`` the collection's are (listed first)
        self.collection_warning_count = 0
        #: each file's (or part's) serialized test reports with the worker that ran it, for the report plugins
        #: of the worker that ends the session (report_replay.py)
        self.file_reports: list[tuple[_Worker, str, tuple[dict[str, Any], ...]]] = []
        #: the worker with no more files that ends the session last, held until every other has ended its
        self.held: _Worker | None = None
        #: the files that failed to load (collection errors), which that worker's ``session.testsfailed``
        #: counts as pytest's controller counts every failed collect report
        self.load_errors = 0
        self.filtered_out = 0
        self.collected = False  # the zygote collected the run: the workers it forks start from there
        #: a pytest-style file failed to collect (the workers say so with each file): no test ran, and the
        #: run ends as a one-process run does, "Interrupted: N errors during collection"
        self.collection_stopped = False
        self.scratch = Path(tempfile.mkdtemp(prefix="rt-test-parallel-"))
        config = self.options.pyconfig or pyconfig.load(self.options.root)
        #: the run's folder of the tests' temporary folders (temp_paths.py), each worker's in it
        self.temp_folders = temp_paths.run_folder(config.values, config.basetemp)
        self.setup_template = wire.WorkerSetup(
            options=self.options,
            files=tuple(self.files),
            backend=backend,
            backend_override=backend_override,
            snapshot_update=snapshot_session.update,
            snapshot_ci=snapshot_session.ci,
            snapshot_full_run=snapshot_session.full_run,
            coverage=coverage.options if coverage is not None else None,
            temp_folder=str(self.temp_folders.getbasetemp()),
        )

    # -- the run -----------------------------------------------------------------------------------------------

    def run(self) -> RunFinished:
        started = time.perf_counter()
        options = self.options
        self.recorder.emit(
            RunStarted(
                [f.relative for f in self.files],
                options.seed,
                str(options.root),
                bail=options.bail,
                rerun_each=options.rerun_each,
            )
        )
        try:
            try:
                if self._can_collect_once():
                    self._collect_once()
                self._serve(started)
                if self.collection_stopped and not self.recorder.interrupted:
                    self.recorder.interrupt()  # after every file's errors are recorded, as in one process
            except KeyboardInterrupt:
                self.recorder.interrupt()
                self._stop()
                self._drain()
            if self.recorder.interrupted:
                self._replay_unfinished_parts()
        finally:
            self._end_all()
            if self.zygote is not None:
                self.zygote.close()
            self._finish_extras()
        finished = self.recorder.run_finished(
            files=sum(not f.directory for f in self.files),  # a folder unit (pydirectory.py) is none
            duration=time.perf_counter() - started,
            seed=options.seed,
            filtered_out=self.filtered_out,
            snapshots=self.snapshots.counts(),
        )
        self.temp_folders.finish(int(bool(finished.failed or finished.errors or finished.interrupted)))
        self.recorder.emit(finished)
        return finished

    def _can_collect_once(self) -> bool:
        """The zygote may collect the run for every worker: there is one, and nothing must come before
        collecting in each worker (``--preload`` scripts and their ``before_all`` hooks run first in a
        one-process run; coverage measures each worker's imports from its start)."""
        return self.zygote is not None and not self.options.preload and self.coverage is None

    def _collect_once(self) -> None:
        """The zygote imports every test file before forking the workers, which then start from the collected
        run instead of each importing the files again (:func:`rt_testrunner.worker.collect_in_zygote`). When
        a test module started a thread, forking is not safe: the zygote then runs tests itself, as the first
        worker, with the run it collected (its threads alive, as in one process), and the other workers are
        fresh interpreters, which collect for themselves. When the zygote dies importing a file, that file
        is the error and the run ends there, as when a worker dies so."""
        zygote = self.zygote
        assert zygote is not None
        channel = zygote.collect()
        if channel is None:
            self.zygote = None  # gone: fresh interpreters
            return
        collecting = ""
        adopted = False
        try:
            asked = time.perf_counter()
            channel.send(self.setup_template)
            while True:
                try:
                    message = channel.recv()
                except (EOFError, OSError, ValueError):
                    break
                if message[0] == wire.COLLECTING:
                    collecting = message[1]
                elif message[0] == wire.COLLECTED:
                    if message[1]:
                        self.collected = True
                        if len(message) > 3 and message[3] is not None:
                            self._hand_out_in_session_order(message[3])
                        else:
                            self._cut_big_files(message[2])
                    else:
                        if len(message) > 3 and message[3] is not None:  # fresh workers find them by id
                            self._hand_out_in_session_order(message[3])
                        if self.size > 1 and len(message) > 4:  # other workers would have been forked
                            _tell_no_fork(message[4])
                        # no fork from there: it takes the first piece of work on this channel. A fresh
                        # worker would first spend about as long collecting as it did: the others start
                        # once it has been busy that long (a run over by then needs no other worker)
                        self.zygote = None
                        now = time.perf_counter()
                        self.early = Launched(zygote.process, channel, now, collected=True)
                        self.first_launch = now
                        self.delay_s = max(self.delay_s, now - asked)
                        adopted = True
                    return
        except BaseException:
            zygote.process.kill()  # Ctrl-C while it collects: it has nothing to finish
            raise
        finally:
            if not adopted:
                channel.close()
        code = zygote.process.wait()
        zygote.close()
        self.zygote = None
        self._stop_dispatch()
        name = collecting or (self.files[0].relative if self.files else "<collection>")
        self.reported.add(name)
        failure = _crash_failure(code, [], "importing this file")
        self._replay([(wire.EVENT, FileStarted(name))], FileFinished(name, 0.0, failure))

    def _cut_big_files(self, weights: dict[int, tuple[int, ...]]) -> None:
        """Hand out parts of the big files (:mod:`rt_testrunner.plan`): a run of a few big files then uses
        every worker, and the workers end close together."""
        self.pending = deque(
            plan([w.index for w in self.pending], weights, self.options_parallel, self.timed)
        )
        self.size = max(1, min(self.options_parallel, len(self.pending)))

    def _hand_out_in_session_order(self, turns: Sequence[tuple[int, tuple[str, ...] | None]]) -> None:
        """The collection hooks set an order across files: hand out its turns in that order (plan.py)."""
        self.pending = deque(in_session_order(turns))
        self.size = max(1, min(self.options_parallel, len(self.pending)))

    def _serve(self, started: float) -> None:
        self._spawn()
        rest_at = self.first_launch + self.delay_s
        if self.delay_s == 0 or time.perf_counter() >= rest_at:
            self._spawn_rest()
        while not all(w.gone for w in self.workers):
            timeout = None
            if self._live() < self.size and self.pending and not self.stopping:
                timeout = max(0.0, rest_at - time.perf_counter())
            try:
                worker, batch = self.messages.get(timeout=timeout)
            except queue.Empty:
                self._spawn_rest()
                continue
            for message in batch:
                self._handle(worker, message)

    def _drain(self) -> None:
        """After Ctrl-C: wait for the ended workers' last messages (the partial files are reported)."""
        while not all(w.gone for w in self.workers):
            worker, batch = self.messages.get()
            for message in batch:
                self._handle(worker, message)

    def _finish_extras(self) -> None:
        if self.coverage is not None:
            self.coverage.combine([str(path) for path in sorted(self.scratch.glob("coverage-*"))])
        shutil.rmtree(self.scratch, ignore_errors=True)

    # -- workers -----------------------------------------------------------------------------------------------

    def _spawn(self) -> None:
        """Start a worker (or take the one started early) and give it the next file (the set-up and that
        file are written by its reader thread, so a slow start of one worker does not hold up the others)."""
        if not self.pending or self.stopping:
            return
        number = len(self.workers) + 1
        launched = self.early if self.early is not None else launch(self.options.root, number, self.zygote)
        self.early = None
        worker = _Worker(number, launched.process, launched.channel)
        worker.needs_setup = not (
            launched.collected or (self.collected and isinstance(launched.process, ForkedProcess))
        )
        self.workers.append(worker)
        setup = attrs.evolve(self.setup_template, coverage_file=str(self.scratch / f"coverage-{number}"))
        first = self._next_for(worker)
        threading.Thread(target=self._read, args=(worker, setup, first), daemon=True).start()

    def _spawn_rest(self) -> None:
        while self._live() < self.size and self.pending and not self.stopping:
            self._spawn()

    def _live(self) -> int:
        return sum(1 for worker in self.workers if not worker.gone)

    def _next_for(self, worker: _Worker) -> Work | None:
        if self.stopping or not self.pending:
            return None
        worker.current = self.pending.popleft()
        worker.started_at = time.perf_counter()
        worker.block = []
        return worker.current

    def _read(self, worker: _Worker, setup: wire.WorkerSetup, first: Work | None) -> None:
        """The worker's reader thread: the set-up and first file out, then every message in, then its end."""
        waiter = threading.Thread(target=self._wait, args=(worker, threading.current_thread()), daemon=True)
        waiter.start()
        try:
            if not worker.needs_setup or worker.send(setup):
                worker.send(first.message() if first is not None else (wire.STOP,))
        except BaseException:
            # never leave a worker waiting for a set-up that will not come: it is ended (a crash to the
            # run, reported as such) and the error shows where it came from
            _end(worker.process)
            raise
        while True:
            try:
                batch = worker.channel.recv_many()
            except (EOFError, OSError, ValueError):
                break
            except Exception as exc:  # noqa: BLE001 - a message that does not unpickle: report, stop reading
                self.messages.put((worker, [(wire.EVENT, _broken_message(exc))]))
                break
            self.messages.put((worker, batch))

    def _wait(self, worker: _Worker, reader: threading.Thread) -> None:
        code = worker.process.wait()
        # every message it wrote is read before it counts as gone (unless a process it forked holds the
        # pipe open: then after a grace period)
        reader.join(_PIPE_GRACE_S)
        self.messages.put((worker, [(_GONE, code)]))

    def _stop(self) -> None:
        """No more files: idle workers are told so (they end their session); busy ones are ended now."""
        self.stopping = True
        self.pending.clear()
        for worker in self.workers:
            if worker.gone:
                continue
            if worker.current is None:
                worker.send(self._stop_message(worker))
            else:
                worker.ended_by_us = True
                _end(worker.process)
        self.held = None

    def _no_more_for(self, worker: _Worker) -> None:
        """``worker`` has no more files. When the session's end reads the run's results (pytest-xdist calls
        ``pytest_terminal_summary`` once, in its controller, with every report), the last worker to be done
        is held until the others have ended their sessions, then ends its own with the whole run's results:
        the summary is printed once, and what a plugin writes at the end is written last from all of them."""
        if not self.results_wanted:
            worker.send((wire.STOP,))
            return
        if self.held is not None and self.held is not worker:
            self.held.send((wire.STOP,))  # not the last after all
        self.held = worker
        self._release_held()

    def _release_held(self) -> None:
        """End the held worker's session once no other worker runs a file or ends its session."""
        held = self.held
        if held is None:
            return
        if held.gone:
            self.held = None
            return
        if self.pending or any(w is not held and not w.gone and not w.done for w in self.workers):
            return
        held.send(self._stop_message(held))
        self.held = None

    def _stop_message(self, worker: _Worker) -> tuple[Any, ...]:
        """``(STOP,)``, with the run's results for the worker that ends the session last."""
        if worker is self.held:
            # in the files' order, as one process records them (the workers finish them in any order)
            order = {test_file.relative: index for index, test_file in enumerate(self.files)}
            results = sorted(self.recorder.results, key=lambda event: order.get(event.file, len(order)))
            others = sorted(
                ((file, reports) for sent_by, file, reports in self.file_reports if sent_by is not worker),
                key=lambda pair: order.get(pair[0], len(order)),
            )
            listed = self.recorder.warning_list
            warnings = (
                tuple(listed[: self.collection_warning_count]),
                tuple(listed[self.collection_warning_count :]),
            )
            reports = tuple(report for _, reports in others for report in reports)
            return (wire.STOP, tuple(results), reports, warnings, self.load_errors)
        return (wire.STOP,)

    def _end_all(self) -> None:
        for worker in self.workers:
            if worker.process.poll() is None:
                worker.ended_by_us = True
                _end(worker.process)
            worker.channel.close()

    # -- messages ----------------------------------------------------------------------------------------------

    def _handle(self, worker: _Worker, message: tuple[Any, ...]) -> None:
        kind = message[0]
        if kind == wire.READY:
            worker.ready = True
            self.results_wanted = self.results_wanted or (len(message) > 1 and bool(message[1]))
        elif kind == wire.COLLECTING:
            worker.collecting = message[1]
        elif kind in (wire.EVENT, wire.ECHO):
            worker.block.append(message)
        elif kind == wire.FILE:
            self._file_done(worker, message[1], message[2])
        elif kind == wire.DONE:
            worker.done = True
            if len(message) > 1 and message[1] is not None:
                # a session-end hook of the worker that ended the session set session.exitstatus: the run's
                # status, as in one process (Runner._finish_session)
                self.recorder.exit_code = message[1]
            if worker.current is not None:
                # it ended its session without running the file it was given: its preload or before_all
                # failed (reported below, once), or it bailed; no file runs after that, as in one process
                worker.current = None
                self._stop_dispatch()
            self._replay_outside(worker)
            self._release_held()
        elif kind == _GONE:
            self._gone(worker, message[1])
            self._release_held()

    def _stop_dispatch(self) -> None:
        if not self.stopping:
            self._stop()

    def _file_done(self, worker: _Worker, finished: FileFinished, done: wire.FileDone) -> None:
        block, worker.block = worker.block, []
        self.collection_stopped = self.collection_stopped or done.collection_stopped
        if finished.file in self.reported:
            return  # the same preload error, from another worker
        work = worker.current
        if work is not None and self.files[work.index].relative == finished.file:
            worker.current = None
        if work is not None and work.parts > 1 and worker.current is None:
            self._part_done(work, block, finished, done.warning_list)
        else:
            self.reported.add(finished.file)
            self.recorder.warning_list += done.warning_list
            if not done.not_collected:
                self._replay(block, finished)
        if done.reports:
            self.file_reports.append((worker, finished.file, done.reports))
        self.filtered_out += done.filtered_out
        self.recorder.reruns += done.reruns
        self.recorder.add_categories(dict(done.categories))
        self.recorder.subtests_passed += done.subtests_passed
        self.recorder.warnings += done.warnings
        self.recorder.testsuite_properties += done.testsuite_properties
        if done.collection_warnings is not None and not self.collection_warnings_counted:
            self.collection_warnings_counted = True  # every worker collected the same files: one counts
            self.recorder.warnings += done.collection_warnings
            self.recorder.warning_list[:0] = (
                done.collection_warning_list
            )  # listed first, as pytest lists them
            self.collection_warning_count = len(done.collection_warning_list)
        self._add_snapshots(done)
        if done.interrupted:
            self.recorder.interrupt(done.exit_code, done.interrupt_reason)
        if self.recorder.bailed:
            self._stop_dispatch()
        elif worker.current is None:
            following = self._next_for(worker)
            if following is None:
                self._no_more_for(worker)
            else:
                worker.send(following.message())

    def _part_done(
        self,
        work: Work,
        block: list[tuple[Any, ...]],
        finished: FileFinished,
        warning_list: _Warnings = (),
    ) -> None:
        """A part of a file is done: kept until every part is, then the file is reported whole (its warnings
        listed in the file's order too)."""
        done = self.parts_done.setdefault(work.index, {})
        done[work.part] = (block, finished, warning_list)
        if len(done) == work.parts:
            self._replay_parts(work.index)

    def _replay_parts(self, index: int) -> None:
        """A file run in parts, reported as one: the parts' events in the file's order (one FileStarted), the
        parts' durations summed, the first part's error (a crash) as the file's."""
        done = self.parts_done.pop(index)
        name = self.files[index].relative
        merged: list[tuple[Any, ...]] = [(wire.EVENT, FileStarted(name))]
        duration, error = 0.0, None
        for part in sorted(done):
            block, finished, warning_list = done[part]
            self.recorder.warning_list += warning_list
            merged.extend(m for m in block if not (m[0] == wire.EVENT and isinstance(m[1], FileStarted)))
            duration += finished.duration
            error = error or finished.error
        self.reported.add(name)
        self._replay(merged, FileFinished(name, duration, error))

    def _replay_unfinished_parts(self) -> None:
        """After Ctrl-C: the files of which some parts were done, with what they ran."""
        for index in sorted(self.parts_done):
            self._replay_parts(index)

    def _replay(self, block: list[tuple[Any, ...]], finished: FileFinished) -> None:
        recorder = self.recorder
        if self.collection_stopped and finished.error is None and all(_opens_file(m) for m in block):
            return  # a file that collected when another did not: it ran nothing, and is not shown
        for message in block:
            if message[0] == wire.ECHO:
                if not recorder.bailed:
                    _echo(message[1], message[2])
                continue
            event: TestEvent = message[1]
            if isinstance(event, TestFinished):
                if not recorder.bailed:
                    recorder.record(event)
            elif not (isinstance(event, TestStarted) and recorder.bailed):
                recorder.emit(event)
        if finished.error is not None:
            recorder.counts[TestStatus.ERROR] += 1  # a file that failed to load, as the runner counts it
            self.load_errors += 1
        recorder.emit(finished)

    def _replay_outside(self, worker: _Worker) -> None:
        """Results outside any file (the preload's hooks), once however many workers report them."""
        block, worker.block = worker.block, []
        for message in block:
            if message[0] != wire.EVENT or not isinstance(message[1], TestFinished):
                continue
            event = message[1]
            key = (event.file, event.path)
            if key not in self.outside:
                self.outside.add(key)
                self.recorder.record(event)

    def _add_snapshots(self, done: wire.FileDone) -> None:
        session, counts = self.snapshots, done.snapshots
        session.passed += counts.passed
        session.failed += counts.failed
        session.written += counts.written
        session.updated += counts.updated
        session.obsolete += counts.obsolete
        session.removed += counts.removed
        session.files_removed += counts.files_removed
        session.obsolete_names.extend(done.obsolete)

    def _gone(self, worker: _Worker, code: int) -> None:
        worker.gone = True
        if worker.current is not None:
            work, worker.current = worker.current, None
            test_file = self.files[work.index]
            block, worker.block = worker.block, []
            if worker.ended_by_us:
                if self.recorder.interrupted and block:
                    # Ctrl-C: the tests of this file that finished are results; the file ends here
                    finished = FileFinished(test_file.relative, time.perf_counter() - worker.started_at)
                    if work.parts > 1:
                        self._part_done(work, block, finished)
                    else:
                        self._replay(block, finished)
                        self.reported.add(test_file.relative)
            elif not worker.ready:
                # it died importing a test file: every worker imports every file first, so a new one would
                # die the same way; the file is the error, and the run ends here (a one-process run would
                # have died with it)
                self._stop_dispatch()
                name = worker.collecting or test_file.relative
                if name not in self.reported:
                    self.reported.add(name)
                    failure = _crash_failure(code, [], "importing this file")
                    self._replay([(wire.EVENT, FileStarted(name))], FileFinished(name, 0.0, failure))
            else:
                failure = _crash_failure(code, block)
                if not any(isinstance(m[1], FileStarted) for m in block if m[0] == wire.EVENT):
                    block.insert(0, (wire.EVENT, FileStarted(test_file.relative)))
                finished = FileFinished(test_file.relative, time.perf_counter() - worker.started_at, failure)
                if work.parts > 1:
                    self._part_done(work, block, finished)  # the file's other parts still run
                else:
                    self.reported.add(test_file.relative)
                    self._replay(block, finished)
                if self.recorder.bailed:
                    self._stop_dispatch()
        elif not worker.done and not worker.ended_by_us:
            # it died outside a file: while ending its session (session fixtures' teardown, coverage)
            name = f"<worker {worker.number}>"
            self.recorder.emit(FileStarted(name))
            self.recorder.counts[TestStatus.ERROR] += 1
            self.recorder.emit(
                FileFinished(name, 0.0, _crash_failure(code, worker.block, "ending its session"))
            )
        if self.pending and not self.stopping and self._live() < self.size:
            self._spawn()


@attrs.frozen
class Launched:
    process: subprocess.Popen[bytes] | ForkedProcess | ForkedZygote
    channel: wire.Channel
    at: float  # time.perf_counter() when it was started
    collected: bool = False  # the zygote itself, which collected the run and has its set-up


def launch(root: Path, number: int = 1, zygote: Zygote | None = None) -> Launched:
    """A new worker process and the main process's end of its pipes: forked by ``zygote`` when there is one
    (:mod:`rt_testrunner.zygote`), else a fresh interpreter, which imports what a run needs and builds its
    kernel, then waits for its set-up (``rt test`` launches the first one as soon as it knows the run is
    parallel, so that start-up overlaps the main process's own preparation). Its environment has
    ``RT_TEST_WORKER=<number>`` (unique in the run, as pytest-xdist's ``PYTEST_XDIST_WORKER``), for fixtures
    that need a per-worker name."""
    to_worker_r, to_worker_w = os.pipe()
    from_worker_r, from_worker_w = os.pipe()
    if zygote is not None:
        forked = zygote.fork(number, to_worker_r, from_worker_w)  # closes its two ends
        if forked is not None:
            return Launched(forked, wire.Channel(from_worker_r, to_worker_w), time.perf_counter())
        # the zygote is gone: a fresh interpreter instead, with new pipes
        os.close(from_worker_r)
        os.close(to_worker_w)
        return launch(root, number)
    command = [sys.executable, "-m", "rt_testrunner.worker", str(to_worker_r), str(from_worker_w)]
    try:
        process = subprocess.Popen(
            command,
            cwd=root,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "RT_TEST_WORKER": str(number)},
            pass_fds=(to_worker_r, from_worker_w),
            # its own session: a terminal's Ctrl-C reaches the main process only, which ends the workers
            start_new_session=True,
        )
    finally:
        os.close(to_worker_r)
        os.close(from_worker_w)
    return Launched(process, wire.Channel(from_worker_r, to_worker_w), time.perf_counter())


def _end(process: subprocess.Popen[bytes] | ForkedProcess | ForkedZygote) -> None:
    try:
        process.kill()
    except OSError:
        pass


def _opens_file(message: tuple[Any, ...]) -> bool:
    return message[0] == wire.EVENT and isinstance(message[1], FileStarted)


def _tell_no_fork(threads: str) -> None:
    """One line when the zygote cannot fork the workers (a thread runs there once the suite is collected),
    so a run slower than expected says why, and which thread to look at."""
    print(
        f"rt test --parallel: threads run once the suite is collected ({threads}), so no worker is forked"
        " from it: tests start in that process and the other workers each collect the suite again",
        file=sys.stderr,
    )


def _echo(out_text: str, err_text: str) -> None:
    if out_text:
        sys.stdout.write(out_text)
        sys.stdout.flush()
    if err_text:
        sys.stderr.write(err_text)
        sys.stderr.flush()


def _how(code: int) -> str:
    if code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def _crash_failure(code: int, block: list[tuple[Any, ...]], doing: str = "") -> TestFailure:
    """The error of a file whose worker died: how it died and the test that was running."""
    running = None
    finished = set()
    for message in block:
        if message[0] != wire.EVENT:
            continue
        event = message[1]
        if isinstance(event, TestStarted):
            running = event
        elif isinstance(event, TestFinished):
            finished.add((event.path, event.run))
    if doing:
        where = f" while {doing}"
    elif running is not None and (running.path, running.run) not in finished:
        where = f' while running "{" > ".join(running.path)}"'
    else:
        where = " while loading or between tests of this file"
    text = f"the worker process crashed ({_how(code)}){where}"
    return TestFailure(text, "WorkerCrashed", text)


def _broken_message(exc: BaseException) -> TestEvent:
    message = f"a message from a worker could not be read: {type(exc).__name__}: {exc}"
    return TestFinished(
        "<worker>", ("<worker message>",), TestStatus.ERROR, 0.0, failure=TestFailure(message)
    )
