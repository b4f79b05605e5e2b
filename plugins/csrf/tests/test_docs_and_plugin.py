"""docs/csrf.md's example really runs, and the plugin keeps `import rt` cheap."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from csrf_reference import REPO_ROOT

DOC = REPO_ROOT / "docs" / "csrf.md"
EXPECTED_OUTPUT = """\
form submitted with its token: 200
form submitted without a token: 403
forged token: 403
token from another session: 403
no session at all: 403
"""


def _environ() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("RT_")}


def _run(argv: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, capture_output=True, text=True, timeout=60, cwd=cwd, env=_environ(), check=False
    )


def _code_blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, re.DOTALL)


def test_the_form_flow_example_runs_and_prints_what_the_doc_says(tmp_path: Path) -> None:
    text = DOC.read_text(encoding="utf-8")
    [example] = [block for block in _code_blocks(text, "python") if block.startswith("# example: form_flow")]
    script = tmp_path / "csrf_example.py"
    script.write_text(example, encoding="utf-8")
    result = _run([sys.executable, str(script)], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == EXPECTED_OUTPUT
    assert EXPECTED_OUTPUT in _code_blocks(text, "text")  # the output shown in the doc is the real one


def test_the_short_snippet_at_the_top_of_the_doc_is_right(tmp_path: Path) -> None:
    snippet = _code_blocks(DOC.read_text(encoding="utf-8"), "python")[0]
    lines = []
    for line in snippet.splitlines():  # "expr  # -> True" becomes "assert (expr) is True"
        code, _, shown = line.partition("# ->")
        shown = shown.strip()
        lines.append(f"assert ({code.strip()}) is {shown}" if shown in ("True", "False") else code)
    code = "\n".join(lines)
    assert code.count("assert") == 2
    result = _run([sys.executable, "-c", code])
    assert result.returncode == 0, result.stderr


def test_import_rt_does_not_import_the_csrf_code_until_rt_CSRF_is_used() -> None:
    code = (
        "import sys, rt\n"
        "kernel = rt.get_kernel(); kernel.host.namespace()\n"
        "print('rt_csrf.csrf' in sys.modules, 'rt_csrf.profiles' in sys.modules)\n"
        "rt.CSRF\n"
        "print('rt_csrf.csrf' in sys.modules)\n"
    )
    result = _run([sys.executable, "-c", code])
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "False", "True"]
