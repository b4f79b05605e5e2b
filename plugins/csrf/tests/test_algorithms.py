"""HMAC algorithms come from the rt_register_hmac_algorithms hook: the six built-ins and any a plugin adds."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from typing import Any

import pytest
from csrf_reference import DIGESTS, to_raw

import rt
from rt.hookspecs import hookimpl
from rt.kernel import use_kernel

SECRET = "algorithm-secret"


class Sha3Plugin:
    """A third-party plugin adding a seventh algorithm, the way any distribution would."""

    @hookimpl
    def rt_register_hmac_algorithms(self, register: Callable[[str, Any], None]) -> None:
        register("sha3-256", hashlib.sha3_256)


class Sha1Plugin:
    @hookimpl
    def rt_register_hmac_algorithms(self, register: Callable[[str, Any], None]) -> None:
        register("sha1", hashlib.sha1)


def test_the_six_algorithms_are_registered_by_the_csrf_plugin(rt_kernel: Any) -> None:
    registered = rt_kernel.host.hmac_algorithms()
    assert set(registered) == set(DIGESTS)
    assert {entry.plugin for entry in registered.values()} == {"csrf"}
    for name, entry in registered.items():  # each factory makes the digest the spec names
        assert entry.value().digest_size == DIGESTS[name]().digest_size
        assert hmac.new(b"k", b"m", entry.value).digest() == hmac.new(b"k", b"m", DIGESTS[name]).digest()


def test_a_seventh_algorithm_works_end_to_end(rt_kernel: Any, rt_register: Any) -> None:
    resolved_before = rt.CSRF  # resolved before the plugin is added: must still find the new algorithm
    rt_register(Sha3Plugin(), "sha3-test")
    for csrf in (rt.CSRF, resolved_before):
        token = csrf.generate(SECRET, algorithm="sha3-256", session_id="s", encoding="hex")
        raw = to_raw(token, "hex")
        assert raw[32:] == hmac.new(SECRET.encode(), raw[:32] + b"s", hashlib.sha3_256).digest()
        assert csrf.verify(token, secret=SECRET, algorithm="sha3-256", session_id="s", encoding="hex") is True
        assert csrf.verify(token, secret=SECRET, algorithm="sha256", session_id="s", encoding="hex") is False
    assert rt_kernel.host.hmac_algorithms()["sha3-256"].plugin == "sha3-test"


def test_an_algorithm_is_only_known_to_the_kernel_that_registered_it(
    rt_kernel: Any, rt_register: Any, rt_make_kernel: Any
) -> None:
    rt_register(Sha3Plugin(), "sha3-test")
    assert rt.CSRF.generate(SECRET, algorithm="sha3-256")
    with use_kernel(rt_make_kernel()), pytest.raises(ValueError, match="^Algorithm not supported$"):
        rt.CSRF.generate(SECRET, algorithm="sha3-256")


@pytest.mark.parametrize("algorithm", ["md5", "sha3-256", "SHA256", "sha-256", ""])
def test_unknown_algorithm_raises(csrf: Any, algorithm: str) -> None:
    with pytest.raises(ValueError, match="^Algorithm not supported$"):
        csrf.generate(SECRET, algorithm=algorithm)
    with pytest.raises(ValueError, match="^Algorithm not supported$"):
        csrf.verify("x" * 86, secret=SECRET, algorithm=algorithm)


def test_non_string_algorithm_raises_type_error(csrf: Any) -> None:
    with pytest.raises(TypeError, match="^Algorithm not supported$"):
        csrf.generate(SECRET, algorithm=hashlib.sha256)


def test_an_algorithm_too_short_for_the_layout_is_refused_clearly(csrf: Any, rt_register: Any) -> None:
    rt_register(Sha1Plugin(), "sha1-test")
    with pytest.raises(ValueError, match="'sha1' makes 20-byte signatures.*32 to 64"):
        rt.CSRF.generate(SECRET, algorithm="sha1")


def test_without_the_plugin_rt_csrf_names_the_distribution(rt_make_kernel: Any) -> None:
    kernel = rt_make_kernel(load_entry_points=False)
    with use_kernel(kernel), pytest.raises(AttributeError, match="rt-csrf"):
        rt.CSRF  # noqa: B018
