"""Running the tests: one process, files in order, hooks around tests, retries, time-outs, concurrency, bail.

The run is split by concern, as pytest separates them: :mod:`~rt_testrunner.collect` loads files into suite
trees, :mod:`~rt_testrunner.schedule` decides what runs, in which order and what runs together,
:mod:`~rt_testrunner.execute` calls tests and hooks (main thread or event loop, time-outs), and
:mod:`~rt_testrunner.report` turns outcomes into :mod:`rt.events` events for the reporters. This module walks
the trees and ties the four together.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
from rt.events import (
    FileFinished,
    FileStarted,
    RunFinished,
    RunStarted,
    TestFailure,
    TestFinished,
    TestStarted,
    TestStatus,
)
from rt.interfaces import Reporter

from rt_testrunner import collect, snapshots, timeouts
from rt_testrunner.discovery import TestFile
from rt_testrunner.execute import MAIN_THREAD, Executor
from rt_testrunner.failures import render_exception
from rt_testrunner.model import Suite, TestCase
from rt_testrunner.report import Recorder
from rt_testrunner.schedule import Schedule, split_group


@attrs.frozen
class RunOptions:
    """Everything the runner needs, already validated (see :mod:`rt_testrunner.command`)."""

    root: Path
    timeout_ms: int = 5000
    rerun_each: int = 1
    retry: int = 0
    concurrent: bool = False
    max_concurrency: int = 20  # 0: unlimited
    seed: int | None = None  # set when the order is randomized
    bail: int | None = None
    todo: bool = False
    name_pattern: re.Pattern[str] | None = None
    only: bool = False
    preload: tuple[str, ...] = ()


class Runner:
    def __init__(self, options: RunOptions, reporters: Sequence[Reporter], backend: str = "asyncio") -> None:
        self.options = options
        self.executor = Executor(backend)
        self.recorder = Recorder(reporters, options.root, options.bail)
        self.schedule = Schedule(options.name_pattern, options.only, options.todo, options.seed,
                                 options.concurrent)
        self.preload_root = Suite(None)
        self.limiter: Any = None

    @property
    def counts(self) -> dict[TestStatus, int]:
        return self.recorder.counts

    @property
    def bailed(self) -> bool:
        return self.recorder.bailed

    # -- the run -----------------------------------------------------------------------------------------------

    def run_sync(self, files: Sequence[TestFile]) -> RunFinished:
        """Run everything; returns the final event (also emitted)."""
        finished: RunFinished = self.executor.run_sync(self.run(files))
        return finished

    async def run(self, files: Sequence[TestFile]) -> RunFinished:
        started = time.perf_counter()
        emit = self.recorder.emit
        emit(RunStarted([f.relative for f in files], self.options.seed, str(self.options.root),
                        bail=self.options.bail, rerun_each=self.options.rerun_each))
        with timeouts.installed() as self.executor.alarms:
            preload_error = self._load_preload()
            if preload_error is not None:
                self.counts[TestStatus.FAIL] += 1
                emit(FileStarted(preload_error[0]))
                emit(FileFinished(preload_error[0], 0.0, preload_error[1]))
            else:
                await self._run_files(files)
        counts = self.counts
        finished = RunFinished(
            passed=counts[TestStatus.PASS], failed=counts[TestStatus.FAIL], skipped=counts[TestStatus.SKIP],
            todo=counts[TestStatus.TODO], expect_calls=self.recorder.expect_calls, files=len(files),
            duration=time.perf_counter() - started, seed=self.options.seed, bailed=self.bailed,
            snapshots=snapshots.counts(),
        )
        emit(finished)
        return finished

    async def _run_files(self, files: Sequence[TestFile]) -> None:
        hook_error = await self.executor.hooks(self.preload_root, "before_all", deadline_ms=self.options.timeout_ms)
        if hook_error is None:
            for test_file in files:
                if self.bailed:
                    break
                await self._run_file(test_file)
        else:
            self.recorder.hook_failure(self.preload_root, "before_all", hook_error, "<preload>",
                                       self.options.timeout_ms)
        after_error = await self.executor.hooks(self.preload_root, "after_all", deadline_ms=self.options.timeout_ms)
        if after_error is not None:
            self.recorder.hook_failure(self.preload_root, "after_all", after_error, "<preload>",
                                       self.options.timeout_ms)

    def _load_preload(self) -> tuple[str, TestFailure] | None:
        for script in self.options.preload:
            path = (self.options.root / script).resolve()
            try:
                collect.load_preload(path, self.preload_root)
            except Exception as exc:  # noqa: BLE001 - a test's error of any kind is a result
                return script, render_exception(exc, self.options.root)
        return None

    async def _run_file(self, test_file: TestFile) -> None:
        started = time.perf_counter()
        self.recorder.emit(FileStarted(test_file.relative))
        error: TestFailure | None = None
        for run in range(1, self.options.rerun_each + 1):
            if self.bailed:
                break
            try:
                root = collect.load_file(test_file)
            except Exception as exc:  # noqa: BLE001 - a test's error of any kind is a result
                error = render_exception(exc, self.options.root)
                self.counts[TestStatus.FAIL] += 1
                break
            only_mode = self.options.only or any(t.has("only") for t in root.tests())
            await self._run_suite(root, [self.preload_root], test_file, run, only_mode)
        self.recorder.emit(FileFinished(test_file.relative, time.perf_counter() - started, error))

    # -- suites ------------------------------------------------------------------------------------------------

    async def _run_suite(self, suite: Suite, chain: list[Suite], test_file: TestFile, run: int,
                         only_mode: bool) -> None:
        schedule = self.schedule
        selected = [t for t in suite.tests() if schedule.selected(t, only_mode)]
        if not selected:
            return
        executes = any(schedule.will_execute(t) for t in selected)
        chain = [*chain, suite]
        if executes:
            error = await self.executor.hooks(suite, "before_all", deadline_ms=self.options.timeout_ms)
            if error is not None:
                self.recorder.hook_failure(suite, "before_all", error, test_file.relative, self.options.timeout_ms)
                await self._after_all(suite, test_file)
                return
        group: list[TestCase] = []
        for child in schedule.ordered(suite, test_file.relative):
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

    async def _after_all(self, suite: Suite, test_file: TestFile) -> None:
        error = await self.executor.hooks(suite, "after_all", deadline_ms=self.options.timeout_ms)
        if error is not None:
            self.recorder.hook_failure(suite, "after_all", error, test_file.relative, self.options.timeout_ms)

    async def _run_group(self, group: list[TestCase], chain: list[Suite], test_file: TestFile, run: int) -> None:
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

    async def _run_group_in_loop(self, group: list[TestCase], chain: list[Suite], test_file: TestFile,
                                 run: int) -> None:
        import anyio

        if self.limiter is None:
            self.limiter = anyio.CapacityLimiter(self.options.max_concurrency or math.inf)
        limiter = self.limiter

        async def limited(case: TestCase) -> None:
            async with limiter:
                if not self.bailed:
                    await self._run_test(case, chain, test_file, run)

        async with anyio.create_task_group() as group_tasks:
            for case in group:
                group_tasks.start_soon(limited, case)

    # -- one test ----------------------------------------------------------------------------------------------

    async def _run_test(self, case: TestCase, chain: list[Suite], test_file: TestFile, run: int) -> None:
        if self.bailed:
            return
        recorder = self.recorder
        location = recorder.location(case.location)
        run_label = run if self.options.rerun_each > 1 else 1
        if not self.schedule.will_execute(case):
            status = TestStatus.SKIP if case.has("skip") else TestStatus.TODO
            recorder.record(TestFinished(test_file.relative, case.path, status, 0.0, run=run_label,
                                         location=location))
            return
        retries = case.retry if case.retry is not None else self.options.retry
        timeout_ms = case.timeout or self.options.timeout_ms
        attempt = 1
        while True:
            recorder.emit(TestStarted(test_file.relative, case.path, attempt, run_label))
            started = time.perf_counter()
            outcome = await self.executor.attempt(case, chain, timeout_ms)
            duration = time.perf_counter() - started
            status, failure = recorder.judge(case, outcome, timeout_ms)
            if status is not TestStatus.FAIL or attempt > retries:
                break
            attempt += 1
        recorder.record(TestFinished(test_file.relative, case.path, status, duration, attempt, run_label, failure,
                                     location, outcome.expect_calls))
