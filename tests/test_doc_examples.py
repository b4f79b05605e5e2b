"""The Python examples of README.md and docs/*.md run as written.

Every fenced block that starts with three backticks and ``python`` is run in a fresh interpreter (in an empty
temporary directory, with no ``RT_*`` variable set but ``RT_SECRETS_BACKEND=memory``, so that rt.secrets
examples run without an OS credential store), and must exit with status 0 within a minute. So an
example that no longer runs fails here, naming the file and line of the block.

A block that cannot run unattended (a server that runs until Ctrl-C, a script that needs a browser, a
`conftest.py` fragment) is marked on the line right before its fence, and is then only compiled (``await`` allowed at top level)::

    <!-- doc-test: compile-only (a server: runs until stopped) -->
    ```python
    ...
    ```

The comment is invisible in rendered Markdown; say why in the parentheses.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rt.testing import clean_environ

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARK = re.compile(r"<!--\s*doc-test:\s*compile-only\b.*-->")
HOW = (
    "\nIf this example is not meant to run unattended (a server, a fragment), put\n"
    "    <!-- doc-test: compile-only (why) -->\n"
    "on the line right before its ```python fence; it is then only compiled. (tests/test_doc_examples.py)"
)


class Block:
    def __init__(self, page: Path, line: int, code: str, compile_only: bool) -> None:
        self.page, self.line, self.code, self.compile_only = page, line, code, compile_only

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The ```python blocks of ``page``, with the line of their fence and whether they are compile-only."""
    found: list[Block] = []
    lines = page.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        fence = lines[index].strip()
        if fence.startswith("```") and fence[3:].strip().split(" ")[0] == "python":
            start = index
            index += 1
            body: list[str] = []
            while index < len(lines) and lines[index].strip() != "```":
                body.append(lines[index])
                index += 1
            marked = start > 0 and bool(MARK.search(lines[start - 1]))
            found.append(Block(page, start + 1, "\n".join(body) + "\n", marked))
        index += 1
    return found


ALL = [block for page in PAGES for block in blocks(page)]


def test_the_examples_are_found():
    assert len(ALL) >= 10
    assert any(block.page.name == "README.md" for block in ALL)


@pytest.mark.parametrize("block", ALL, ids=[block.where for block in ALL])
def test_doc_example_runs(block: Block, tmp_path: Path) -> None:
    try:
        compile(block.code, block.where, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    except SyntaxError as exc:
        pytest.fail(f"{block.where}: the example does not compile: {exc}")
    if block.compile_only:
        return
    script = tmp_path / "example.py"
    script.write_text(block.code, encoding="utf-8")
    try:
        result = subprocess.run(
            [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=60,
            env=clean_environ({"RT_SECRETS_BACKEND": "memory"}),
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{block.where}: the example was still running after 60 s.{HOW}")
    if result.returncode != 0:
        pytest.fail(
            f"{block.where}: the example exited with status {result.returncode}:\n"
            f"{result.stderr[-3000:]}{HOW}"
        )


def test_blocks_are_read_with_their_mark(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    page = tmp_path / "page.md"
    page.write_text(
        "text\n```python\nprint(1)\n```\n<!-- doc-test: compile-only (a server) -->\n```python\nserve()\n```\n"
        "```console\n$ rt\n```\n"
    )
    found = blocks(page)
    assert [(b.where, b.code, b.compile_only) for b in found] == [
        ("page.md:2", "print(1)\n", False),
        ("page.md:6", "serve()\n", True),
    ]
