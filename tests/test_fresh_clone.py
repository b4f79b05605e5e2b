"""A fresh clone runs everything: one test command, every system dependency listed, the example installing
only what it needs, a busy port explained in one line, a LICENSE matching the metadata."""

from __future__ import annotations

import ast
import errno
import os
import re
import shutil
import socket
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from rt import _known
from rt.testing import clean_environ

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
TEST_COMMAND = ".ci/test"
EXAMPLE_COMMAND = "uv run --only-group example rt examples/chat/app.py"


def apt_packages() -> list[tuple[str, str]]:
    rows = []
    for line in (ROOT / ".ci" / "apt-packages.txt").read_text().splitlines():
        words = line.split("#", 1)[0].split()
        if words:
            rows.append((words[0], words[1] if len(words) > 1 else words[0]))
    return rows


def console_commands() -> list[str]:
    """The commands of the README's first console block, in order."""
    block = README.split("```console", 1)[1].split("```", 1)[0]
    return [line[2:].split("#", 1)[0].strip() for line in block.splitlines() if line.startswith("$ ")]


def test_the_readme_commands_are_install_uv_the_example_and_the_test_command():
    assert console_commands() == ["pip install uv", EXAMPLE_COMMAND, TEST_COMMAND]


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^if ! \(cd \"\$scratch/rt\" && \.ci/test( [^)]*)?\); then$", ci, re.M), (
        "CI runs .ci/test in a copy of the clone"
    )
    assert os.access(ROOT / TEST_COMMAND, os.X_OK)


def test_the_readme_lists_every_system_dependency():
    for package, program in apt_packages():
        assert f"| {package} | {program} |" in README, f"README.md's table of system dependencies lacks {package}"


def test_the_example_group_holds_what_the_example_uses():
    """Every rt. name examples/chat/app.py uses comes from a distribution of the `example` group, and the
    group pulls no test, browser or tox tooling."""
    groups = tomllib.loads((ROOT / "pyproject.toml").read_text())["dependency-groups"]
    example = set(groups["example"])
    tree = ast.parse((ROOT / "examples" / "chat" / "app.py").read_text())
    used = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and getattr(n.value, "id", "") == "rt"}
    needed = {_known.NAME_TO_DISTRIBUTION["rt"][name] for name in used if name in _known.NAME_TO_DISTRIBUTION["rt"]}
    assert needed and needed | {"rt-kernel", "rt-debug"} <= example  # rt-debug: `rt FILE.py` is `rt run FILE.py`
    assert not any("[test]" in dep or dep.startswith(("pytest", "tox", "playwright")) for dep in example)


@pytest.mark.skipif(shutil.which("uv") is None, reason="uv is not on PATH (it is in the dev environment)")
def test_the_example_group_resolves_without_test_tooling():
    result = subprocess.run(
        ["uv", "export", "--frozen", "--only-group", "example", "--no-hashes", "--no-header"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, env=clean_environ(),
    )
    assert result.returncode == 0, result.stderr
    names = {re.split(r"[=\s\[]", line.strip().removeprefix("-e "))[0] for line in result.stdout.splitlines()}
    assert {"pytest", "playwright", "tox", "hypothesis", "ruff", "mypy"}.isdisjoint(names), names


def test_a_busy_port_says_to_set_port_in_one_line():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "rt", "examples/chat/app.py"], cwd=ROOT, capture_output=True, text=True,
            timeout=120, env=clean_environ({"PORT": str(port)}),
        )
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"rt chat: port {port} is in use: set PORT to a free one (PORT=0 picks any)"
    ], result.stderr
    assert errno.EADDRINUSE  # the condition the example turns into that line


def _run_test_command(tmp_path: Path, packages: str, **environ: str) -> subprocess.CompletedProcess[str]:
    import tempfile

    folder = Path(tempfile.mkdtemp())  # readable by the unprivileged user (pytest's tmp_path is not)
    folder.chmod(0o755)
    listing = folder / "packages.txt"
    listing.write_text(packages)
    listing.chmod(0o644)
    command = [str(ROOT / TEST_COMMAND)]
    if os.geteuid() == 0:  # as a user without root (and without sudo rights)
        command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *command]
    return subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=120,
        env=clean_environ({"CI_TEST_PACKAGES": str(listing), **environ}),
    )


@pytest.mark.skipif(shutil.which("setpriv") is None and os.geteuid() == 0, reason="needs setpriv to drop root")
def test_without_root_the_test_command_names_each_missing_package(tmp_path):
    result = _run_test_command(tmp_path, "# comment\nrt-no-such-package rt-no-such-program\ndbus dbus-daemon\n")
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert lines[0] == (
        "rt tests: missing rt-no-such-program: install the Debian package rt-no-such-package "
        "(apt-get install rt-no-such-package), or your system's package that provides rt-no-such-program"
    ), result.stderr
    assert not any("dbus" in line for line in lines)  # installed: not reported
    assert "sudo apt-get install rt-no-such-package" in lines[-1]


@pytest.mark.skipif(shutil.which("setpriv") is None and os.geteuid() == 0, reason="needs setpriv to drop root")
def test_off_debian_the_test_command_names_each_missing_program(tmp_path):
    result = _run_test_command(
        tmp_path, "rt-no-such-package rt-no-such-program\nrt-other-package\ndbus dbus-daemon\n", CI_TEST_OFF_DEBIAN="1"
    )
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "rt tests: missing rt-no-such-program: install the Debian package rt-no-such-package (apt-get install "
        "rt-no-such-package), or your system's package that provides rt-no-such-program",
        "rt tests: missing rt-other-package: install the Debian package rt-other-package (apt-get install "
        "rt-other-package), or your system's package that provides rt-other-package",
    ]


def test_the_license_file_matches_the_metadata():
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License")
    for pyproject in [ROOT / "kernel" / "pyproject.toml", *ROOT.glob("plugins/*/pyproject.toml"),
                      *ROOT.glob("contrib/*/pyproject.toml")]:
        assert tomllib.loads(pyproject.read_text())["project"]["license"] == "MIT", pyproject


def test_the_readme_says_supported_versions_and_how_to_install_from_a_checkout():
    requires = tomllib.loads((ROOT / "kernel" / "pyproject.toml").read_text())["project"]["requires-python"]
    assert "## Supported versions and platforms" in README and requires in README
    assert "## Install from a checkout" in README and "pip install ./kernel" in README
