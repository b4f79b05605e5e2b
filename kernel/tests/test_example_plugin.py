"""The third-party example plugin (docs/examples/rt-sha3) installed as a real distribution in a fresh venv:
discovered through its entry point, listed by `rt plugins`, usable, and disabled by name."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rt.testing import clean_environ

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "docs" / "examples" / "rt-sha3"


def _uv() -> list[str]:
    found = shutil.which("uv")
    if found:
        return [found]
    try:
        import uv  # noqa: F401
    except ImportError:
        pytest.fail(
            "this test installs distributions with uv: pip install uv (the dev group and tox envs include it)"
        )
    return [sys.executable, "-m", "uv"]


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A fresh virtual environment holding rt-kernel and rt-sha3 (and rt-csrf, when it is in this tree)."""
    root = tmp_path_factory.mktemp("example-venv")
    env = clean_environ({"VIRTUAL_ENV": str(root / "venv")})
    env.pop("UV_PROJECT_ENVIRONMENT", None)
    subprocess.run(
        [*_uv(), "venv", "--quiet", "--python", sys.executable, str(root / "venv")], check=True, env=env
    )
    packages = [str(REPO / "kernel"), str(EXAMPLE)]
    if (REPO / "plugins" / "csrf" / "src" / "rt_csrf" / "csrf.py").exists():
        packages.insert(1, str(REPO / "plugins" / "csrf"))
    subprocess.run(
        [*_uv(), "pip", "install", "--quiet", "--python", str(root / "venv" / "bin" / "python"), *packages],
        check=True,
        env=env,
        cwd=root,
    )
    return root / "venv"


def _run(venv: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [str(venv / "bin" / args[0]), *args[1:]],
        capture_output=True,
        text=True,
        cwd=venv.parent,
        env=clean_environ(env),
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result


def test_rt_plugins_lists_the_example(venv):
    listed = {p["name"]: p for p in json.loads(_run(venv, "rt", "plugins", "--json").stdout)}
    assert listed["sha3"]["distribution"] == "rt-sha3"
    assert listed["sha3"]["version"] == "1.0.0"
    assert listed["sha3"]["hooks"] == ["rt_register_hmac_algorithms"]
    assert not listed["sha3"]["disabled"]
    table = _run(venv, "rt", "plugins").stdout
    assert "sha3" in table and "rt-sha3" in table


def test_its_algorithms_are_registered_under_its_name(venv):
    code = (
        "import rt, json\n"
        "found = rt.get_kernel().host.hmac_algorithms()\n"
        "print(json.dumps({n: r.plugin for n, r in found.items() if n.startswith('sha3-')}))\n"
    )
    assert json.loads(_run(venv, "python", "-c", code).stdout) == {"sha3-256": "sha3", "sha3-512": "sha3"}


@pytest.mark.parametrize("how", ["env", "config"])
def test_it_can_be_disabled_by_name(venv, how):
    env = {"RT_DISABLE_PLUGINS": "sha3"} if how == "env" else None
    if how == "config":
        (venv.parent / "rt.toml").write_text('[plugins]\ndisable = ["sha3"]\n')
    try:
        listed = {p["name"]: p for p in json.loads(_run(venv, "rt", "plugins", "--json", env=env).stdout)}
        code = "import rt; print(sorted(n for n in rt.get_kernel().host.hmac_algorithms() if n.startswith('sha3-')))"
        assert _run(venv, "python", "-c", code, env=env).stdout.strip() == "[]"
    finally:
        (venv.parent / "rt.toml").unlink(missing_ok=True)
    assert listed["sha3"]["disabled"]


def test_end_to_end_with_csrf_when_present(venv):
    """With rt-csrf installed too, a token signed with the plugin's algorithm verifies (and not with another)."""
    code = (
        "import importlib.util, rt\n"
        "if importlib.util.find_spec('rt_csrf') is None: print('no-csrf'); raise SystemExit\n"
        "t = rt.CSRF.generate('k', algorithm='sha3-256')\n"
        "print(rt.CSRF.verify(t, secret='k', algorithm='sha3-256'), rt.CSRF.verify(t, secret='k', algorithm='sha256'))\n"
    )
    out = _run(venv, "python", "-c", code).stdout.split()
    csrf_in_tree = (REPO / "plugins" / "csrf" / "src" / "rt_csrf" / "csrf.py").exists()
    assert out == (["True", "False"] if csrf_in_tree else ["no-csrf"])
