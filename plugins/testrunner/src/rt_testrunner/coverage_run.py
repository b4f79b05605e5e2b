"""``rt test --coverage``: coverage.py measures the run; rt prints the reference runtime's table and lcov file.

Measuring is coverage.py's job (its ``sys.monitoring`` core on Python 3.12+, where it makes measuring much
cheaper); rt only chooses what is measured (the project's own code: test files, snapshots and installed
packages are left out) and reads the numbers back from coverage.py's JSON report, so every percentage shown is
coverage.py's own. The table is written on stderr when the run finishes, before the summary, as the reference
does; ``lcov`` writes ``<coverage-dir>/lcov.info`` in the reference's record format.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TextIO

import attrs

from rt.events import RunFinished, TestEvent
from rt_testrunner.discovery import PATTERNS

REPORTERS = ("text", "lcov")
#: what is never measured: test files (the four patterns), snapshots, installed packages, virtual environments
OMIT = (
    *(f"*/{pattern}" for pattern in PATTERNS),
    "*/__snapshots__/*",
    "*/site-packages/*",
    "*/dist-packages/*",
    "*/.venv/*",
    "*/venv/*",
    "*/node_modules/*",
)


class CoverageUnavailable(Exception):
    """coverage.py is not installed."""


@attrs.frozen
class CoverageOptions:
    reporters: tuple[str, ...] = ("text",)
    directory: str = "coverage"
    branch: bool = False
    threshold: float | None = None  # a fraction (0.9): lines and functions (and branches with branch=True)


@attrs.frozen
class FileCoverage:
    path: str
    functions: int
    functions_hit: int
    statements: int
    statements_hit: int
    branches: int
    branches_hit: int
    executed: tuple[int, ...]
    missing: tuple[int, ...]
    functions_lines: tuple[tuple[str, int, bool], ...] = ()  # name, first line, covered

    @property
    def percent_functions(self) -> float:
        return _percent(self.functions_hit, self.functions)

    @property
    def percent_lines(self) -> float:
        return _percent(self.statements_hit, self.statements)

    @property
    def percent_branches(self) -> float:
        return _percent(self.branches_hit, self.branches)


def _percent(hit: int, total: int) -> float:
    return 100.0 * hit / total if total else 100.0


def totals(files: Sequence[FileCoverage]) -> FileCoverage:
    return FileCoverage(
        "All files",
        sum(f.functions for f in files),
        sum(f.functions_hit for f in files),
        sum(f.statements for f in files),
        sum(f.statements_hit for f in files),
        sum(f.branches for f in files),
        sum(f.branches_hit for f in files),
        (),
        (),
    )


def line_ranges(lines: Iterable[int]) -> str:
    """``5,7-8``: consecutive uncovered lines as ranges."""
    parts: list[str] = []
    ordered = sorted(lines)
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        parts.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(parts)


def render_table(files: Sequence[FileCoverage], branch: bool) -> str:
    """The reference's table: ``File | % Funcs | % Lines | Uncovered Line #s`` and an ``All files`` row
    (``% Branch`` added with branch coverage)."""
    headers = ["File", "% Funcs", "% Lines"] + (["% Branch"] if branch else []) + ["Uncovered Line #s"]
    rows: list[list[str]] = []
    for entry, indent in [(totals(files), ""), *((f, " ") for f in files)]:
        row = [indent + entry.path, f"{entry.percent_functions:.2f}", f"{entry.percent_lines:.2f}"]
        if branch:
            row.append(f"{entry.percent_branches:.2f}")
        row.append(line_ranges(entry.missing))
        rows.append(row)
    widths = [max(len(headers[i]), *(len(r[i]) for r in rows)) for i in range(len(headers) - 1)]
    last = max(len(headers[-1]), *(len(r[-1]) for r in rows))
    rule = "|".join(["-" * (w + 2) for w in widths] + ["-" * (last + 2)])

    def line(cells: list[str], header: bool = False) -> str:
        out = [cells[0].ljust(widths[0]) + "  "]
        for i in range(1, len(widths)):
            cell = cells[i].ljust(widths[i]) if header else cells[i].rjust(widths[i])
            out.append(" " + cell + " ")
        out.append(" " + cells[-1])
        return "|".join(out).rstrip()

    lines = [rule, line(headers, header=True), rule, *(line(r) for r in rows), rule]
    return "\n".join(lines) + "\n"


def render_lcov(
    files: Sequence[FileCoverage], branch_data: dict[str, tuple[list[list[int]], list[list[int]]]]
) -> str:
    """lcov records as the reference writes them (``TN:``, ``SF:``, ``FNF:``, ``FNH:``, ``DA:``, ``LF:``,
    ``LH:``, ``end_of_record``), with ``FN``/``FNDA`` per function and ``BRDA`` lines with branch coverage."""
    out: list[str] = []
    for f in files:
        out.append("TN:")
        out.append(f"SF:{f.path}")
        for name, first, _covered in f.functions_lines:
            out.append(f"FN:{first},{name}")
        for name, _first, covered in f.functions_lines:
            out.append(f"FNDA:{int(covered)},{name}")
        out.append(f"FNF:{f.functions}")
        out.append(f"FNH:{f.functions_hit}")
        executed = set(f.executed)
        for number in sorted(executed | set(f.missing)):
            out.append(f"DA:{number},{int(number in executed)}")
        out.append(f"LF:{f.statements}")
        out.append(f"LH:{f.statements_hit}")
        if f.path in branch_data:
            taken, missed = branch_data[f.path]
            arcs = sorted([(a, b, 1) for a, b in taken] + [(a, b, 0) for a, b in missed])
            for index, (source, _target, hit) in enumerate(arcs):
                out.append(f"BRDA:{source},0,{index},{hit if source in executed else '-'}")
            out.append(f"BRF:{f.branches}")
            out.append(f"BRH:{f.branches_hit}")
        out.append("end_of_record")
    return "\n".join(out) + ("\n" if out else "")


def parse_report(
    report: dict[str, Any],
) -> tuple[list[FileCoverage], dict[str, tuple[list[list[int]], list[list[int]]]]]:
    """coverage.py's JSON report (format 3) as rows, in path order."""
    files: list[FileCoverage] = []
    branches: dict[str, tuple[list[list[int]], list[list[int]]]] = {}
    for path, data in sorted(report["files"].items()):
        summary = data["summary"]
        functions = [
            (name, int(fn.get("start_line", 0)), fn["summary"]["covered_lines"] > 0)
            for name, fn in data.get("functions", {}).items()
            if name
        ]
        shown = Path(path).as_posix()
        files.append(
            FileCoverage(
                shown,
                len(functions),
                sum(1 for _, _, hit in functions if hit),
                summary["num_statements"],
                summary["covered_lines"],
                summary.get("num_branches", 0),
                summary.get("covered_branches", 0),
                tuple(data["executed_lines"]),
                tuple(data["missing_lines"]),
                tuple(functions),
            )
        )
        if "executed_branches" in data:
            branches[shown] = (data["executed_branches"], data["missing_branches"])
    return files, branches


def threshold_failures(files: Sequence[FileCoverage], options: CoverageOptions) -> list[str]:
    if options.threshold is None:
        return []
    total = totals(files)
    wanted = 100.0 * options.threshold
    measured = [("lines", total.percent_lines), ("functions", total.percent_functions)]
    if options.branch:
        measured.append(("branches", total.percent_branches))
    return [
        f"coverage for {what} ({value:.2f}%) does not meet the threshold ({wanted:.2f}%)"
        for what, value in measured
        if value + 1e-9 < wanted
    ]


class CoverageSession:
    """Measures from :meth:`start` until the run finishes; reports then (as a reporter, before the summary)."""

    def __init__(
        self,
        root: Path,
        options: CoverageOptions,
        stream: TextIO | None = None,
        data_file: str | None = None,
    ) -> None:
        try:
            import coverage
        except ImportError:
            raise CoverageUnavailable(
                "--coverage needs coverage.py: pip install 'rt-testrunner[coverage]'"
            ) from None
        self.root = root
        self.options = options
        self.stream = stream
        self.failures: list[str] = []
        self.files: list[FileCoverage] = []
        self.cov = coverage.Coverage(
            data_file=data_file, branch=options.branch, source=[str(root)], omit=list(OMIT), messages=False
        )
        if sys.version_info >= (3, 12) and (not options.branch or sys.version_info >= (3, 14)):
            # sys.monitoring: far cheaper than a trace function; branch measurement needs 3.14 there
            self.cov.set_option("run:core", "sysmon")
        self.running = False

    def start(self) -> None:
        self.cov.start()
        self.running = True

    def stop(self) -> None:
        if self.running:
            self.cov.stop()
            self.running = False

    def save(self) -> None:
        """A ``--parallel`` worker's end: its data goes to its data file for :meth:`combine`."""
        self.stop()
        self.cov.save()

    def combine(self, data_files: Sequence[str]) -> None:
        """The main process of ``--parallel``: the workers' data, merged by coverage.py's own ``combine``
        (the report then reads as if one process had run every test)."""
        present = [path for path in data_files if Path(path).is_file()]
        if present:
            self.cov.combine(present, strict=False, keep=False)

    def handle(self, event: TestEvent) -> None:
        if isinstance(event, RunFinished):
            self.finish()

    def close(self) -> None:
        self.stop()

    def finish(self) -> None:
        from coverage.exceptions import NoDataError

        self.stop()
        with tempfile.TemporaryDirectory() as scratch:
            out = Path(scratch) / "coverage.json"
            cwd = os.getcwd()
            os.chdir(self.root)  # paths in the report relative to the project, as the table shows them
            try:
                self.cov.json_report(
                    outfile=str(out), show_contexts=False, pretty_print=False, ignore_errors=True
                )
            except NoDataError:  # nothing of the project ran or was imported: an empty table
                out.write_text('{"files": {}}')
            finally:
                os.chdir(cwd)
            report = json.loads(out.read_text())
        self.files, branch_data = parse_report(report)
        stream = self.stream or sys.stderr
        if "text" in self.options.reporters:
            stream.write(render_table(self.files, self.options.branch))
        if "lcov" in self.options.reporters:
            directory = self.root / self.options.directory
            directory.mkdir(parents=True, exist_ok=True)
            (directory / "lcov.info").write_text(render_lcov(self.files, branch_data), encoding="utf-8")
        self.failures = threshold_failures(self.files, self.options)
        for failure in self.failures:
            stream.write(f"error: {failure}\n")
        stream.flush()
