"""docs/secrets.md's recipes run as written: the headless one captures only the secret."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[3] / "docs" / "secrets.md"


def headless_recipe() -> str:
    lines = [
        line for line in DOC.read_text(encoding="utf-8").splitlines() if line.startswith("dbus-run-session")
    ]
    assert len(lines) == 1, lines
    return lines[0]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux Secret Service only")
def test_the_headless_recipe_captures_the_secret_and_nothing_else(tmp_path: Path) -> None:
    for tool in ("dbus-run-session", "gnome-keyring-daemon"):
        if shutil.which(tool) is None:
            pytest.fail(
                f"{tool} is missing: install the Debian packages dbus and gnome-keyring", pytrace=False
            )
    recipe = headless_recipe()
    get = "rt secrets get -s my-cli -n alice"
    assert recipe.endswith(f"; {get}'")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DBUS_", "XDG_", "RT_", "DISPLAY"))}
    env.update(HOME=str(tmp_path), XDG_DATA_HOME=str(tmp_path / "data"), XDG_CONFIG_HOME=str(tmp_path / "config"),
               XDG_RUNTIME_DIR=str(tmp_path / "run"), KEYRING_PASSWORD="doc-recipe-password",
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}")  # fmt: skip
    (tmp_path / "run").mkdir(mode=0o700)
    store = recipe.replace(get, "printf %s doc-recipe-token | rt secrets set -s my-cli -n alice")
    stored = subprocess.run(["sh", "-c", store], env=env, capture_output=True, timeout=120, check=False)
    assert stored.returncode == 0, stored.stderr.decode(errors="replace")
    # exactly as the doc says, inside $(...): only the token comes out
    captured = subprocess.run(["sh", "-c", f'TOKEN=$({recipe}); printf "[%s]" "$TOKEN"'], env=env,
                              capture_output=True, timeout=120, check=False)  # fmt: skip
    assert captured.returncode == 0, captured.stderr.decode(errors="replace")
    assert captured.stdout == b"[doc-recipe-token]"


def test_the_first_example_runs_as_a_script(tmp_path: Path) -> None:
    """A script has no top-level await: the example wraps the calls in a function run by anyio."""
    text = DOC.read_text(encoding="utf-8")
    example = text.split("```python\n", 1)[1].split("```", 1)[0]
    script = tmp_path / "example.py"
    script.write_text(example, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RT_")}
    env["RT_SECRETS_BACKEND"] = "memory"  # the example's calls, without an OS store
    done = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert done.stdout.decode().splitlines() == ["tok", "True"]


def test_the_key_file_recipe_runs_as_written(tmp_path: Path) -> None:
    """The folder of the key file does not exist yet; the key file comes out private (0600 in a 0700 folder)."""
    # the recipe installs rt-filesecrets first; where it is not installed (tox's rt-secrets-alone env) it
    # cannot run; the workspace suite (`.ci/test`), which has every distribution, runs it
    pytest.importorskip("rt_filesecrets", reason="the recipe needs rt-filesecrets (its `pip install` line)")
    section = DOC.read_text(encoding="utf-8").split("## The `file` backend", 1)[1]
    recipe = section.split("```sh\n")[2].split("```", 1)[0]
    assert "RT_FILESECRETS_KEY_FILE" in recipe and "RT_SECRETS_PASSPHRASE" not in recipe
    commands = "\n".join(line for line in recipe.splitlines() if not line.startswith("pip install"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RT_", "XDG_"))}
    env.update(HOME=str(tmp_path), XDG_DATA_HOME=str(tmp_path / "data"), TOKEN="key-file-token",
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}")  # fmt: skip
    script = f"set -e\n{commands}\nrt secrets get -s my-cli -n alice\n"
    done = subprocess.run(["sh", "-c", script], env=env, capture_output=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert done.stdout.decode().strip() == "key-file-token"
    key = tmp_path / ".config" / "rt" / "secrets.key"
    assert (key.stat().st_mode & 0o777, key.parent.stat().st_mode & 0o777) == (0o600, 0o700)
    assert len(key.read_bytes()) == 32
