"""Print the failed and errored tests of JUnit XML reports, briefly, at the end of a CI log.

tox's parallel live output interleaves the envs' lines, and a CI log is often read from its end only; this
puts each failure's test id, message and the last lines of its traceback where they are read.
Usage: python .ci/failures.py REPORT.xml...
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path

TAIL = 25  # lines of each traceback: its end names the exception and where it was raised


def main(paths: list[str]) -> int:
    count = 0
    for path in paths:
        try:
            root = ET.parse(path).getroot()
        except (OSError, ET.ParseError) as exc:
            print(f"{path}: unreadable ({exc})")
            continue
        env = Path(path).parent.name
        for case in root.iter("testcase"):
            for problem in [*case.findall("failure"), *case.findall("error")]:
                count += 1
                name = f"{case.get('classname', '')}::{case.get('name', '')}"
                print(f"--- [{env}] {problem.tag}: {name}")
                print(f"    {(problem.get('message') or '').strip()[:2000]}")
                for line in (problem.text or "").rstrip().splitlines()[-TAIL:]:
                    print(f"    | {line}")
    print(f"{count} failed or errored test(s) in {len(paths)} report(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
