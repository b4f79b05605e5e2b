"""The lazy `rt.` namespace and `rt.test`: names resolve through plugins; missing ones say what to install."""

from __future__ import annotations

import pytest

import rt
import rt.test as rt_test
from rt._known import NAME_TO_DISTRIBUTION
from rt.errors import DuplicateRegistrationError, PluginNotInstalledError
from rt.hookspecs import hookimpl
from rt.interfaces import NamespaceEntry
from rt.testing import distribution_installed as installed


class Provides:
    """A throwaway plugin that puts names on rt. and rt.test and counts how often they are loaded."""

    def __init__(self, **names: object) -> None:
        self.names = names
        self.loads = 0

    @hookimpl
    def rt_register_namespace(self, register):
        for name, value in self.names.items():
            module, _, attr = name.rpartition("__")
            register(
                NamespaceEntry(attr, self._loader(value), module="rt.test" if module == "test" else "rt")
            )

    def _loader(self, value):
        def load(kernel):
            self.loads += 1
            self.kernel = kernel
            return value

        return load


def test_registered_name_resolves_once(rt_register, rt_kernel):
    plugin = Provides(answer=42)
    rt_register(plugin, "answers")
    assert rt.answer == 42
    assert rt.answer == 42
    assert plugin.kernel is rt_kernel  # load receives the kernel resolving the name
    assert plugin.loads == 1
    assert "answer" in dir(rt)


def test_reading_every_name_dir_lists_loads_no_plugin(rt_register):
    """A module scanner (freezegun at each freeze_time, inspect.getmembers) reads every attribute dir()
    lists: that must not import every installed plugin."""
    plugin = Provides(answer=42)
    rt_register(plugin, "answers")
    for name in dir(rt):
        getattr(rt, name)
    assert plugin.loads == 0
    assert "answer" not in dir(rt)
    assert rt.answer == 42  # still there on first use, and listed from then on
    assert "answer" in dir(rt)
    assert {"Kernel", "get_kernel", "test"} <= set(dir(rt))


def test_registered_test_name_resolves_on_rt_test(rt_register):
    rt_register(Provides(test__helper="from plugin"), "helpers")
    assert rt_test.helper == "from plugin"
    from rt.test import helper

    assert helper == "from plugin"


def test_names_are_per_kernel(rt_register, rt_make_kernel):
    rt_register(Provides(answer=1), "one")
    other = rt_make_kernel(load_entry_points=False)
    other.register(Provides(answer=2), "two")
    assert rt.answer == 1
    with rt.use_kernel(other):
        assert rt.answer == 2
    assert rt.answer == 1


def test_unregistered_plugin_name_disappears(rt_kernel):
    rt_kernel.register(Provides(answer=3), "three")
    assert rt.answer == 3
    rt_kernel.unregister("three")
    assert not hasattr(rt, "answer")


def test_two_plugins_same_name_is_an_error_naming_both(rt_register):
    rt_register(Provides(answer=1), "first")
    rt_register(Provides(answer=2), "second")
    with pytest.raises(DuplicateRegistrationError, match="'first'.*'second'|'second'.*'first'"):
        rt.answer  # noqa: B018


@pytest.mark.parametrize(
    ("module", "name", "distribution"),
    [(m, n, d) for m, names in NAME_TO_DISTRIBUTION.items() for n, d in names.items()],
)
def test_every_first_party_name_without_its_plugin_names_the_distribution(
    rt_make_kernel, module, name, distribution
):
    kernel = rt_make_kernel(load_entry_points=False)
    with rt.use_kernel(kernel):
        target = rt if module == "rt" else rt_test
        with pytest.raises(PluginNotInstalledError) as info:
            getattr(target, name)
        assert f"pip install {distribution}" in str(info.value)
        assert not hasattr(target, name)


@pytest.mark.parametrize(("name", "distribution"), sorted(NAME_TO_DISTRIBUTION["rt"].items()))
def test_first_party_names_with_real_entry_points(rt_kernel, name, distribution):
    """In the `kernel` tox env nothing is installed and every name must give the clear error; where the plugin
    is installed and provides the name, it must resolve."""
    plugin_names = {p.distribution for p in rt_kernel.plugins()}
    if distribution in plugin_names and f"rt:{name}" in rt_kernel.host.namespace():
        assert getattr(rt, name) is not None
    else:
        with pytest.raises(AttributeError, match=f"{distribution}"):
            getattr(rt, name)


def test_from_import_keeps_the_message(rt_make_kernel):
    with rt.use_kernel(rt_make_kernel(load_entry_points=False)):
        with pytest.raises(ModuleNotFoundError, match="pip install rt-csrf"):
            from rt import CSRF  # noqa: F401
        with pytest.raises(ModuleNotFoundError, match="pip install rt-testrunner"):
            from rt.test import expect  # noqa: F401


def test_unknown_name_is_a_plain_attribute_error(rt_kernel):
    with pytest.raises(AttributeError, match="has no attribute 'definitely_not_here'") as info:
        rt.definitely_not_here  # noqa: B018
    assert not isinstance(info.value, PluginNotInstalledError)


def test_disabled_plugin_says_disabled(rt_make_kernel):
    kernel = rt_make_kernel('[plugins]\ndisable = ["csrf"]\n')
    expected = "disabled" if installed("rt-csrf") else "not installed"
    with rt.use_kernel(kernel), pytest.raises(PluginNotInstalledError, match=expected):
        rt.CSRF  # noqa: B018


def test_rt_test_is_a_real_module():
    import importlib
    import types

    module = importlib.import_module("rt.test")
    assert isinstance(module, types.ModuleType)
    assert rt.test is module


def test_kernel_names_are_available_without_plugins():
    assert rt.Kernel.__name__ == "Kernel"
    assert callable(rt.hookimpl)
    assert rt.__version__ == __import__("importlib.metadata").metadata.version("rt-kernel")


def test_installed_helper_matches_metadata():
    assert installed("rt-kernel")
    assert not installed("rt-no-such-distribution")


def test_all_lists_exactly_the_kernel_names():
    assert sorted(rt.__all__) == sorted([*rt._KERNEL_NAMES, "test"])


def test_use_kernel_switches_names_on_the_fast_path():
    """After its first read a plugin name is a property of rt's module class (no AttributeError is built
    per read); it still answers for the kernel in use."""
    from rt.config import Config
    from rt.kernel import Kernel, use_kernel

    def kernel(*plugins):
        return Kernel(Config(environ={}), load_entry_points=False, plugins=plugins)

    one, two, none = kernel(("p", Provides(switched=1))), kernel(("p", Provides(switched=2))), kernel()
    with use_kernel(one):
        assert rt.switched == 1
        assert rt.switched == 1
    assert "switched" in type(rt).__dict__  # the fast path is in place
    with use_kernel(two):
        assert rt.switched == 2
        with use_kernel(none):
            with pytest.raises(AttributeError):
                rt.switched  # noqa: B018
            assert not hasattr(rt, "switched")
        assert rt.switched == 2
    with use_kernel(one):
        assert rt.switched == 1
