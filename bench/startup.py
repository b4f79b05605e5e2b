"""How much `import rt` costs, against a bare interpreter and against importing the plugin machinery.

Run: uv run python bench/startup.py [--runs N]

Each variant is a fresh interpreter; the figure is the median wall time over N runs. The claim it backs:
`import rt` adds almost nothing (no plugin, not pluggy, not anyio), and loading every installed plugin
happens only on first use of a name on `rt.`.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

VARIANTS = {
    "python -c pass": "pass",
    "import rt": "import rt",
    "import pluggy (for scale)": "import pluggy",
    "import rt; first rt. name (loads all plugins)": "import rt; rt.get_kernel()",
}


def median_ms(code: str, runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    results = {label: median_ms(code, args.runs) for label, code in VARIANTS.items()}
    base = results["python -c pass"]
    print(f"{'variant':50} {'median ms':>10} {'over bare python':>17}")
    for label, ms in results.items():
        print(f"{label:50} {ms:10.1f} {ms - base:+16.1f}")


if __name__ == "__main__":
    main()
