"""The docs cannot drift from the code: every hook is documented with its real signature, and examples run."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from pathlib import Path

import pluggy

from rt import hookspecs
from rt.testing import clean_environ

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _spec_signatures() -> dict[str, list[str]]:
    marker = f"{hookspecs.PROJECT_NAME}_spec"
    return {
        name: list(inspect.signature(fn).parameters)
        for name, fn in vars(hookspecs).items()
        if callable(fn) and hasattr(fn, marker)
    }


def _documented_signatures() -> dict[str, list[str]]:
    text = (DOCS / "plugins.md").read_text()
    found = re.findall(r"^### `(rt_\w+)\(([^)]*)\)`", text, flags=re.MULTILINE)
    return {name: [a.strip() for a in args.split(",") if a.strip()] for name, args in found}


def test_every_hook_is_documented_with_its_arguments():
    specs, documented = _spec_signatures(), _documented_signatures()
    assert specs, "no hook specs found"
    missing = sorted(set(specs) - set(documented))
    assert not missing, f"hooks missing from docs/plugins.md: {missing}"
    assert documented == specs


def test_no_documented_hook_is_stale():
    assert set(_documented_signatures()) <= set(_spec_signatures())


def test_every_hook_spec_has_a_docstring():
    for name in _spec_signatures():
        assert (getattr(hookspecs, name).__doc__ or "").strip(), name


def test_config_page_example_runs(tmp_path):
    text = (DOCS / "config.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, flags=re.DOTALL).group(1)
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=clean_environ(),
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["done", "done"]


def test_pluggy_markers_are_the_kernels():
    assert isinstance(hookspecs.hookimpl, pluggy.HookimplMarker)
    assert hookspecs.hookimpl.project_name == "rt"


def test_every_first_party_name_has_a_row_in_the_spec_name_table(rt_kernel):
    """Names on rt. from the plugins installed here must appear in docs/spec-names.md (as `rt.<name>`)."""
    from rt._known import NAME_TO_DISTRIBUTION

    table = (DOCS / "spec-names.md").read_text()
    first_party = {name for name, _dist in NAME_TO_DISTRIBUTION["rt"].items()}
    registered = {
        entry.value.name for key, entry in rt_kernel.host.namespace().items() if key.startswith("rt:")
    }
    missing = sorted(name for name in registered & first_party if f"rt.{name}" not in table)
    assert not missing, f"docs/spec-names.md has no row for: {missing}"
