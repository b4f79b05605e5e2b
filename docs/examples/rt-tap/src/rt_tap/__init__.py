"""TAP output for `rt test`: one `ok` / `not ok` line per test, the plan at the end."""

import sys

from rt.events import RunFinished, TestFinished, TestStatus
from rt.hookspecs import hookimpl


class TapReporter:
    def __init__(self, options):
        out = open(options.outfile, "w", encoding="utf-8") if options.outfile else None  # noqa: SIM115 - closed in close()
        self.out = out or sys.stdout
        self.count = 0
        self.out.write("TAP version 13\n")

    def handle(self, event):
        if isinstance(event, TestFinished):
            self.count += 1
            failed = (TestStatus.FAIL, TestStatus.ERROR, TestStatus.XFAIL)
            ok = "not ok" if event.status in failed else "ok"
            directive = {TestStatus.SKIP: " # SKIP", TestStatus.TODO: " # TODO",
                         TestStatus.XFAIL: " # TODO"}.get(event.status, "")
            self.out.write(f"{ok} {self.count} - {event.file} > {event.name}{directive}\n")
            if event.failure is not None:
                self.out.write("".join(f"  # {line}\n" for line in event.failure.message.splitlines()))
        elif isinstance(event, RunFinished):
            self.out.write(f"1..{self.count}\n")

    def close(self):
        if self.out is not sys.stdout:
            self.out.close()


@hookimpl
def rt_register_reporters(register):
    register("tap", TapReporter)  # no `enabled` rule: it runs only when named with --reporter=tap
