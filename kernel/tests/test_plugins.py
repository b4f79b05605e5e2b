"""The plugin host: entry points, blocking by name, check_pending, the typed facade and its error messages."""

from __future__ import annotations

import hashlib
import sys
import textwrap
from pathlib import Path

import pytest

import rt
from rt.config import Config
from rt.errors import DuplicateRegistrationError, PluginLoadError
from rt.hookspecs import hookimpl
from rt.interfaces import Command, ConfigOption, NamespaceEntry
from rt.kernel import Kernel


def bare_kernel(*plugins: tuple[str, object]) -> Kernel:
    return Kernel(Config(environ={}), load_entry_points=False, plugins=plugins)


class Algorithms:
    def __init__(self, *names: str) -> None:
        self.names = names

    @hookimpl
    def rt_register_hmac_algorithms(self, register):
        for name in self.names:
            register(name, hashlib.sha256)


def test_a_fresh_kernel_shares_nothing():
    one, two = bare_kernel(("a", Algorithms("x"))), bare_kernel()
    assert set(one.host.hmac_algorithms()) == {"x"}
    assert two.host.hmac_algorithms() == {}
    assert one.host.pm is not two.host.pm


def test_registered_things_remember_their_plugin():
    kernel = bare_kernel(("algos", Algorithms("x", "y")))
    registered = kernel.host.hmac_algorithms()
    assert {name: r.plugin for name, r in registered.items()} == {"x": "algos", "y": "algos"}
    assert registered["x"].value is hashlib.sha256


def test_duplicate_names_across_plugins_name_both():
    kernel = bare_kernel(("one", Algorithms("x")), ("two", Algorithms("x")))
    with pytest.raises(DuplicateRegistrationError, match="HMAC algorithm 'x'.*'(one|two)'.*'(one|two)'"):
        kernel.host.hmac_algorithms()


def test_a_failing_hook_names_its_plugin():
    class Broken:
        @hookimpl
        def rt_register_hmac_algorithms(self, register):
            raise RuntimeError("boom")

    with pytest.raises(
        PluginLoadError, match="plugin 'broken' failed in rt_register_hmac_algorithms: RuntimeError: boom"
    ):
        bare_kernel(("broken", Broken())).host.hmac_algorithms()


def test_non_callable_factory_is_rejected():
    class Bad:
        @hookimpl
        def rt_register_secret_backends(self, register):
            register("store", "not a factory")

    with pytest.raises(PluginLoadError, match="must be registered with a factory"):
        bare_kernel(("bad", Bad())).host.secret_backends()


def test_wrong_object_kind_is_rejected():
    class Bad:
        @hookimpl
        def rt_register_commands(self, register):
            register("not a Command")

    with pytest.raises(PluginLoadError, match="expected Command"):
        bare_kernel(("bad", Bad())).host.commands()


def test_misspelled_hook_fails_check_pending():
    class Typo:
        @hookimpl
        def rt_register_hmac_algoritms(self, register):
            pass

    with pytest.raises(PluginLoadError, match="plugin 'typo' implements an unknown hook"):
        bare_kernel(("typo", Typo()))


def test_hook_with_wrong_argument_is_rejected_at_registration():
    class WrongArgs:
        @hookimpl
        def rt_register_hmac_algorithms(self, registrar):
            pass

    with pytest.raises(PluginLoadError, match="does not match"):
        bare_kernel(("wrong", WrongArgs()))


def test_every_registration_kind_goes_through_the_facade():
    factory = lambda *a: object()  # noqa: E731

    class All:
        @hookimpl
        def rt_register_commands(self, register):
            register(Command("hello", "say hello", lambda p: None, lambda a, k: 0, aliases=("hi",)))

        @hookimpl
        def rt_register_namespace(self, register):
            register(NamespaceEntry("thing", lambda kernel: 1))

        @hookimpl
        def rt_register_config_options(self, register):
            register(ConfigOption("all", "flag", bool, False))

        @hookimpl
        def rt_register_secret_backends(self, register):
            register("b", factory)

        @hookimpl
        def rt_register_reporters(self, register):
            register("r", factory)

        @hookimpl
        def rt_register_transports(self, register):
            register("t", factory)

        @hookimpl
        def rt_register_compressors(self, register):
            register("c", factory)

        @hookimpl
        def rt_register_brokers(self, register):
            register("k", factory)

    host = bare_kernel(("all", All())).host
    assert set(host.commands()) == {"hello", "hi"}
    assert set(host.namespace()) == {"rt:thing"}
    assert "all.flag" in host.config_options()
    assert [
        set(d)
        for d in (
            host.secret_backends(),
            host.reporters(),
            host.transports(),
            host.compressors(),
            host.brokers(),
        )
    ] == [{"b"}, {"r"}, {"t"}, {"c"}, {"k"}]
    assert [p.name for p in host.plugins()] == ["all"]
    assert "rt_register_brokers" in host.plugins()[0].hooks


def test_configure_and_http_observers_are_called():
    seen = []

    class Observer:
        @hookimpl
        def rt_configure(self, config):
            seen.append(("configure", config.get("backend")))

        @hookimpl
        def rt_http_request(self, request):
            seen.append(("request", request))

        @hookimpl
        def rt_http_response(self, response):
            seen.append(("response", response))

    kernel = bare_kernel(("observer", Observer()))
    assert seen == [("configure", "asyncio")]
    assert kernel.host.has_http_observers()
    from rt.events import HttpRequest, HttpResponse

    request = HttpRequest("GET", "http://127.0.0.1/", [("accept", "*/*")])
    kernel.host.http_request(request)
    kernel.host.http_response(HttpResponse(request, 200, "OK", []))
    assert [kind for kind, _ in seen] == ["configure", "request", "response"]
    assert not bare_kernel().host.has_http_observers()


def _fake_distribution(root: Path, dist: str, ep_name: str, module: str, body: str) -> None:
    """Lay out an installed distribution (dist-info + module) in ``root``, as a wheel install would."""
    (root / f"{module}.py").write_text(textwrap.dedent(body))
    info = root / f"{dist.replace('-', '_')}-1.2.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.2.3\n")
    (info / "entry_points.txt").write_text(f"[rt]\n{ep_name} = {module}\n")


@pytest.fixture
def site(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [m for m in sys.modules if m.startswith("fakeplug")]:
        del sys.modules[name]


def test_entry_points_are_loaded_and_can_be_blocked(site, rt_make_kernel):
    _fake_distribution(
        site,
        "rt-fake",
        "fake",
        "fakeplug_ok",
        """
        import hashlib
        from rt import hookimpl

        @hookimpl
        def rt_register_hmac_algorithms(register):
            register("fake-256", hashlib.sha256)
    """,
    )
    kernel = rt_make_kernel()
    info = {p.name: p for p in kernel.plugins()}["fake"]
    assert (info.distribution, info.version, info.disabled) == ("rt-fake", "1.2.3", False)
    assert info.hooks == ("rt_register_hmac_algorithms",)
    assert "fake-256" in kernel.host.hmac_algorithms()

    blocked = rt_make_kernel(environ={"RT_DISABLE_PLUGINS": "fake"})
    assert {p.name: p for p in blocked.plugins()}["fake"].disabled
    assert "fake-256" not in blocked.host.hmac_algorithms()

    by_config = rt_make_kernel('[plugins]\ndisable = ["fake"]\n')
    assert "fake-256" not in by_config.host.hmac_algorithms()


def test_a_plugin_that_fails_to_import_is_named(site, rt_make_kernel):
    _fake_distribution(site, "rt-broken", "broken", "fakeplug_broken", "raise ImportError('needs libfoo')\n")
    with pytest.raises(PluginLoadError) as info:
        rt_make_kernel()
    message = str(info.value)
    assert "'broken'" in message and "rt-broken" in message and "needs libfoo" in message
    assert "RT_DISABLE_PLUGINS=broken" in message
    kernel = rt_make_kernel(environ={"RT_DISABLE_PLUGINS": "broken"})
    assert {p.name: p for p in kernel.plugins()}["broken"].disabled


def test_register_after_start_refreshes_caches(rt_kernel):
    before = set(rt_kernel.host.hmac_algorithms())
    rt_kernel.register(Algorithms("late-algo"), "late")
    assert set(rt_kernel.host.hmac_algorithms()) == before | {"late-algo"}
    rt_kernel.unregister("late")
    assert set(rt_kernel.host.hmac_algorithms()) == before


def test_get_kernel_default_is_created_once():
    assert rt.get_kernel() is rt.get_kernel()


def test_broken_distribution_metadata_does_not_stop_the_kernel(site, rt_make_kernel):
    _fake_distribution(
        site,
        "rt-halfway",
        "halfway",
        "fakeplug_halfway",
        """
        from rt import hookimpl

        @hookimpl
        def rt_configure(config):
            pass
    """,
    )
    (site / "rt_halfway-1.2.3.dist-info" / "METADATA").unlink()  # as if a package manager were mid-install
    info = {p.name: p for p in rt_make_kernel().plugins()}["halfway"]
    assert (info.distribution, info.version, info.hooks) == ("rt_halfway", "1.2.3", ("rt_configure",))


def test_generation_and_dict_identity_tell_caches_when_to_refresh(rt_kernel):
    generation, algorithms = rt_kernel.host.generation, rt_kernel.host.hmac_algorithms()
    assert rt_kernel.host.hmac_algorithms() is algorithms, "same object while nothing changes"
    rt_kernel.register(Algorithms("gen-algo"), "gen")
    assert rt_kernel.host.generation == generation + 1
    assert rt_kernel.host.hmac_algorithms() is not algorithms
    rt_kernel.unregister("gen")
    assert rt_kernel.host.generation == generation + 2


def test_lazy_entries_and_commands_import_on_first_use(site, rt_make_kernel):
    (site / "fakeplug_lazy_target.py").write_text(
        "import sys\nsys.modules[__name__].imported = True\nVALUE = {'x': 1}\n"
        "def configure(parser):\n    parser.add_argument('--n', type=int)\n"
        "def run(args, kernel):\n    return args.n * 2\n"
    )

    class Lazy:
        @hookimpl
        def rt_register_namespace(self, register):
            register(NamespaceEntry.lazy("lazy_value", "fakeplug_lazy_target:VALUE"))

        @hookimpl
        def rt_register_commands(self, register):
            register(
                Command.lazy(
                    "double", "doubles", "fakeplug_lazy_target:configure", "fakeplug_lazy_target:run"
                )
            )

    kernel = rt_make_kernel(load_entry_points=False)
    kernel.register(Lazy(), "lazy")
    assert "fakeplug_lazy_target" not in sys.modules, "registering imports nothing"
    command = kernel.host.commands()["double"].value
    assert "fakeplug_lazy_target" not in sys.modules
    with rt.use_kernel(kernel):
        assert rt.lazy_value == {"x": 1}
    import argparse

    parser = argparse.ArgumentParser()
    command.configure(parser)
    assert command.run(parser.parse_args(["--n", "21"]), kernel) == 42


def test_two_distributions_claiming_one_plugin_name_is_an_error(
    site, tmp_path_factory, monkeypatch, rt_make_kernel
):
    _fake_distribution(site, "rt-one", "same", "fakeplug_one", "")
    other = tmp_path_factory.mktemp("other-site")
    _fake_distribution(other, "rt-two", "same", "fakeplug_two", "")
    monkeypatch.syspath_prepend(str(other))
    with pytest.raises(
        DuplicateRegistrationError, match="'same' is declared by two distributions, rt-two and rt-one"
    ):
        rt_make_kernel()


def test_a_failing_observer_is_logged_and_does_not_stop_the_others(caplog):
    from rt.events import HttpRequest

    seen = []

    class Broken:
        @hookimpl
        def rt_http_request(self, request):
            raise RuntimeError("observer bug")

    class Working:
        @hookimpl
        def rt_http_request(self, request):
            seen.append(request.url)

    for order in (
        (("broken", Broken()), ("working", Working())),
        (("working", Working()), ("broken", Broken())),
    ):
        seen.clear()
        caplog.clear()
        kernel = bare_kernel(*order)
        kernel.host.http_request(HttpRequest("GET", "http://127.0.0.1/x", []))
        assert seen == ["http://127.0.0.1/x"]
        assert "plugin 'broken' failed in rt_http_request" in caplog.text


def test_commands_with_aliases_are_cached_until_the_registry_changes():
    class Cmd:
        @hookimpl
        def rt_register_commands(self, register):
            register(Command("hello", "h", lambda p: None, lambda a, k: 0, aliases=("hi",)))

    kernel = bare_kernel(("cmd", Cmd()))
    first = kernel.host.commands()
    assert kernel.host.commands() is first and first["hi"] is first["hello"]


def test_an_installed_plugin_without_the_name_says_upgrade(site, rt_make_kernel):
    """A first-party name its (older) distribution does not provide is not "not installed"."""
    from rt.errors import PluginNotInstalledError

    _fake_distribution(
        site, "rt-http", "http", "fakeplug_old_http", ""
    )  # first on sys.path: shadows a real one
    with rt.use_kernel(rt_make_kernel()), pytest.raises(PluginNotInstalledError) as info:
        rt.fetch  # noqa: B018
    assert "installed but does not provide it" in str(info.value)
    assert "pip install --upgrade rt-http" in str(info.value)
