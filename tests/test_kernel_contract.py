"""The kernel's contract with the shipped plugins: every hook has a caller and an implementation, and the
kernel's table of first-party names (rt/_known.py) says what the plugins really register.

Runs where every shipped distribution is installed: `uv run pytest` and the tox `all` env.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

import rt.hookspecs
from rt import _known
from rt.config import Config
from rt.kernel import Kernel

ROOT = Path(__file__).resolve().parents[1]

# ---------------------------------------------------------------------------------------------------------
# PENDING: hooks that have a specification but no caller or no shipped implementation YET, each with the
# work that will add it. This is the one place they are listed. When you implement one, delete its line
# here: the test fails while a hook listed here is fully covered, so the list cannot go stale.
PENDING_HOOKS: dict[str, str] = {
}
# Names the kernel already maps to their distribution in rt/_known.py (API.md) that no plugin registers yet.
PENDING_NAMES: dict[str, str] = {
}
# Distributions the kernel already names in rt/_known.py but that are not in the workspace yet.
PENDING_DISTRIBUTIONS: dict[str, str] = {}
# ---------------------------------------------------------------------------------------------------------

HOOKS = sorted(name for name in vars(rt.hookspecs) if name.startswith("rt_"))
SHIPPED = {
    tomllib.loads(path.read_text())["project"]["name"]: path.parent
    for pattern in ("plugins/*/pyproject.toml", "contrib/*/pyproject.toml")
    for path in ROOT.glob(pattern)
}
SOURCES = [
    path
    for pattern in ("kernel/src/**/*.py", "plugins/*/src/**/*.py", "contrib/*/src/**/*.py")
    for path in ROOT.glob(pattern)
]
FACADE = ROOT / "kernel" / "src" / "rt" / "plugins.py"


@pytest.fixture(scope="module")
def kernel() -> Kernel:
    kernel = Kernel(Config(environ={}))
    installed = {info.distribution for info in kernel.plugins()}
    missing = sorted(set(SHIPPED) - installed)
    assert not missing, f"run this where every shipped distribution is installed (tox -e all); missing {missing}"
    return kernel


def facade_methods() -> dict[str, set[str]]:
    """For each hook, the PluginHost methods that dispatch it (they name the hook in a string or attribute)."""
    tree = ast.parse(FACADE.read_text())
    host = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "PluginHost")
    found: dict[str, set[str]] = {}
    for method in host.body:
        if not isinstance(method, ast.FunctionDef) or method.name.startswith("_"):
            continue
        for node in ast.walk(method):
            name = node.value if isinstance(node, ast.Constant) else node.attr if isinstance(node, ast.Attribute) else None
            if name in HOOKS:
                found.setdefault(name, set()).add(method.name)
    return found


def callers(hook: str) -> list[str]:
    """Places outside the facade that call a facade method dispatching ``hook`` on a plugin host."""
    places = []
    for method in facade_methods().get(hook, ()):
        pattern = re.compile(rf"(?:\bhost|_host)\.{method}\(")
        places += [str(p.relative_to(ROOT)) for p in SOURCES if p != FACADE and pattern.search(p.read_text())]
    return places


def implementations(kernel: Kernel, hook: str) -> list[str]:
    distribution = {info.name: info.distribution for info in kernel.plugins()}
    return [
        impl.plugin_name
        for impl in getattr(kernel.host.pm.hook, hook).get_hookimpls()
        if distribution.get(impl.plugin_name) in SHIPPED
    ]


def test_hooks_are_found():
    assert "rt_register_namespace" in HOOKS and "rt_configure" in HOOKS
    assert facade_methods()["rt_register_hmac_algorithms"] == {"hmac_algorithms"}


@pytest.mark.parametrize("hook", HOOKS)
def test_every_hook_has_a_caller_and_a_shipped_implementation(kernel, hook):
    called_from, implemented_by = callers(hook), implementations(kernel, hook)
    if hook in PENDING_HOOKS:
        if called_from and implemented_by:
            pytest.fail(
                f"{hook} is now called ({called_from}) and implemented ({implemented_by}): delete it from "
                f"PENDING_HOOKS in {Path(__file__).relative_to(ROOT)}"
            )
        pytest.xfail(f"pending: {PENDING_HOOKS[hook]}")
    assert called_from, (
        f"nothing calls {hook}: add a PluginHost method that dispatches it (pm.hook.{hook}) and call it, or "
        f"list it in PENDING_HOOKS with the work that will"
    )
    assert implemented_by, f"no shipped plugin implements {hook}"


def test_known_names_match_what_the_plugins_register(kernel):
    """rt/_known.py names the distribution to install for a missing first-party name, section or command;
    it must say exactly what the shipped plugins register, or the error sends users to the wrong place."""
    distribution = {info.name: info.distribution for info in kernel.plugins()}
    shipped = set(SHIPPED)

    registered_names: dict[str, dict[str, str]] = {}
    for registered in kernel.host.namespace().values():
        dist = distribution.get(registered.plugin)
        if dist in shipped:
            registered_names.setdefault(registered.value.module, {})[registered.value.name] = dist
    known_names = {
        module: {
            name: dist for name, dist in names.items()
            if dist not in PENDING_DISTRIBUTIONS and f"{module}.{name}" not in PENDING_NAMES
        }
        for module, names in _known.NAME_TO_DISTRIBUTION.items()
    }
    _same(known_names, registered_names, "names (NAME_TO_DISTRIBUTION)")
    for name, work in PENDING_NAMES.items():
        module, _, attr = name.rpartition(".")
        assert attr not in registered_names.get(module, {}), f"{name} is registered now: delete it from PENDING_NAMES"
        assert attr in _known.NAME_TO_DISTRIBUTION[module], f"{name} ({work}) is not in rt/_known.py"

    sections = {
        option.value.section: distribution[option.plugin]
        for option in kernel.host.config_options().values()
        if distribution.get(option.plugin) in shipped
    }
    known_sections = {s: d for s, d in _known.SECTION_TO_DISTRIBUTION.items() if d not in PENDING_DISTRIBUTIONS}
    _same(known_sections, sections, "configuration sections (SECTION_TO_DISTRIBUTION)")

    commands = {
        registered.value.name: distribution[registered.plugin]
        for registered in kernel.host.commands().values()
        if distribution.get(registered.plugin) in shipped
    }
    _same(_known.COMMAND_TO_DISTRIBUTION, commands, "commands (COMMAND_TO_DISTRIBUTION)")


def _flat(table: dict) -> set[tuple[str, str]]:
    return {
        (f"{key}.{name}", dist) if isinstance(value, dict) else (key, value)
        for key, value in table.items()
        for name, dist in (value.items() if isinstance(value, dict) else [(None, None)])
    }


def _same(known: dict, registered: dict, what: str) -> None:
    known_only, registered_only = sorted(_flat(known) - _flat(registered)), sorted(_flat(registered) - _flat(known))
    assert not (known_only or registered_only), (
        f"rt/_known.py and the shipped plugins disagree on {what}: listed but not registered {known_only}; "
        f"registered but not listed {registered_only}"
    )


def test_pending_distributions_are_not_shipped_yet():
    for dist, work in PENDING_DISTRIBUTIONS.items():
        assert dist not in SHIPPED, f"{dist} is in the workspace now ({work}): delete it from PENDING_DISTRIBUTIONS"


def test_a_script_named_rt_debug_gets_a_clear_error_not_a_deadlock(tmp_path):
    """``python rt_debug.py`` using ``rt.inspect``: the plugin's package is shadowed by the script; before,
    building the kernel re-imported the script, which waited forever on the kernel being built."""
    import subprocess
    import sys

    from rt.testing import clean_environ

    (tmp_path / "rt_debug.py").write_text("import rt\nprint(rt.inspect([1]))\n")
    result = subprocess.run(
        [sys.executable, "rt_debug.py"], cwd=tmp_path, capture_output=True, text=True, timeout=60,
        env=clean_environ(),
    )
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert "rt_debug.py has the name of its package 'rt_debug' and hides it; rename that file" in last, last
