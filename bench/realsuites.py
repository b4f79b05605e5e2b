"""Real projects' own test suites under pytest and under `rt test`: outcome counts and wall time, same run.

    uv run python -P bench/realsuites.py [--repeat 1] [--suites toolz,itsdangerous,more-itertools|compat|all]
                                         [--keep DIR] [--env suite|dev] [--floor] [--no-bytecode] [--parallel N]
                                         [--warm]

Each suite is the project's sdist from PyPI (`pip download --no-deps --no-binary :all: NAME==VERSION`),
unpacked as a new user would; pytest and `rt test` then run in its folder, with no arguments, in one
environment. Which environment (`--env`):

- `suite` (the default): the environment a user of that project would have, one per suite: a fresh virtual
  environment (`uv venv --python 3.11`) holding pytest at uv.lock's version, rt (rt-kernel and rt-testrunner
  from this checkout, editable, their dependencies at uv.lock's versions) and the suite's own test
  dependencies, nothing else. With `--keep DIR` it is kept in DIR/NAME-venv and reused while its
  requirements are unchanged. This is the goal's measure: neither runner pays for plugins the project does
  not use.
- `dev`: this environment (rt's development one, with every pytest plugin its tests need installed:
  hypothesis, syrupy, pytest-benchmark, pytest-cov ...), the suite's test dependencies installed with `uv
  pip install --target` into a folder on PYTHONPATH. Both runners load every installed plugin (pytest11
  entry points), so this is where installed plugins' costs show.

Both runners always run in the same environment, so the comparison stays fair. Printed per suite:
the outcome counts of each runner (passed, failed, skipped, xfailed, xpassed, errors), whether they are the
same, and the best wall time of `--repeat` fresh processes with the ratio rt/pytest, plus the CPU time
(user + system) of the same processes, which the other work on a shared machine disturbs less. Exit status 1
when any suite's counts differ. Also run from bench/testrunner.py (case e).

As on a developer's machine: one untimed run of each runner first, with bytecode writing on (the
environment's PYTHONDONTWRITEBYTECODE is dropped), so both find their `.pyc` files, pytest its rewritten
test files in `__pycache__` and rt its own cache there. Without that, a runner that imports more modules
pays for compiling them on every run, and the ratio measures the compiler. `--no-bytecode` keeps
PYTHONDONTWRITEBYTECODE=1 and skips the warm-up (what a machine that never wrote them sees).
The runners alternate (pytest, rt, pytest, rt ...) so both see the same load.

With `--parallel N` (default 2, this machine's cores; 0 leaves it out) a second line per suite times
`rt test --parallel=N` and, for fairness, pytest-xdist's `pytest -n N` when the environment has it (the dev
one does; a suite's own has it only when the suite lists it), in the same alternation; rt's parallel counts
must equal pytest's too (xdist's are printed, not required). The plain pytest runs are made with
`-p no:xdist`, so installing xdist does not change the baseline.

With `--warm` a third line per suite times `rt test` with its warm start on (RT_TEST_WARM=1,
docs/testing.md "Warm start"): one cold run first (untimed: it starts the warm server), then `--repeat`
runs forked from that server, in the same alternation; their counts must equal pytest's. The wall time is
the `rt` client's, which waits for its run; the CPU time is the client's plus the forked child's (from the
fork to the exit, as the server logs it), printed apart too. The server is stopped after the suite.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
from pathlib import Path

#: name, version, extra test dependencies, environment (PYTHONPATH for src layouts)
SUITES: dict[str, tuple[str, tuple[str, ...], dict[str, str]]] = {
    "toolz": ("1.2.0", (), {}),
    "itsdangerous": ("2.2.0", ("freezegun",), {"PYTHONPATH": "src"}),
    "more-itertools": ("11.2.1", (), {}),
    "cachetools": ("5.5.0", (), {"PYTHONPATH": "src"}),
    "pluggy": ("1.5.0", (), {"PYTHONPATH": "src"}),
}
#: more suites, each chosen for a different part of pytest, checked for identical counts (`--suites compat`,
#: or `--suites all` with the ones above); not in the default set, which bench/testrunner.py times
COMPAT_SUITES: dict[str, tuple[str, tuple[str, ...], dict[str, str]]] = {
    "parse": ("1.20.2", (), {}),  # parametrize, skipif
    "jmespath": ("1.0.1", (), {}),  # generated tests from JSON files, unittest
    "sqlparse": ("0.5.1", (), {}),  # conftest fixtures, xfail, xpass
    "humanize": (
        "4.11.0",
        ("freezegun", "pytest-cov"),
        {"PYTHONPATH": "src"},
    ),  # addopts, freezegun, big parametrize
    "wcwidth": ("0.2.13", ("pytest-cov",), {}),  # tox.ini [pytest], addopts
    "tabulate": ("0.9.0", ("wcwidth",), {}),  # a `test` folder, importorskip
    "jinja2": ("3.1.4", ("markupsafe", "trio"), {"PYTHONPATH": "src"}),  # filterwarnings = error, async tests
    "marshmallow": ("3.23.1", ("simplejson",), {"PYTHONPATH": "src"}),  # norecursedirs with a path
    "tenacity": ("9.0.0", ("tornado", "typeguard"), {}),  # unittest methods running their own event loop
    "structlog": ("24.4.0", ("freezegun", "pretend", "pytest-asyncio", "simplejson"), {"PYTHONPATH": "src"}),
    "platformdirs": ("4.3.6", ("appdirs", "pytest-mock"), {"PYTHONPATH": "src"}),  # pytest-mock's mocker
    "python-dotenv": ("1.0.1", ("click", "sh"), {"PYTHONPATH": "src"}),  # setup.cfg, subprocesses
    "pyparsing": ("3.2.0", ("railroad-diagrams", "jinja2"), {}),  # import-time state, unittest subTest
    "packaging": ("24.2", ("pretend",), {"PYTHONPATH": "src"}),  # 27,000 parametrized tests
    "exceptiongroup": ("1.2.2", (), {"PYTHONPATH": "src"}),  # pytest.raises(match=), skipif on versions
    "simplejson": ("3.19.3", (), {}),  # unittest.TestCase only, 31 files in the package's tests folder
    "pathspec": ("0.12.1", (), {}),  # unittest.TestCase in a tests package next to the library
    "schema": ("0.7.7", (), {}),  # one test module at the root, pytest.raises, mock.patch
    "mistune": (
        "3.0.2",
        (),
        {},
    ),  # pythonpath = ["src", "."], filterwarnings = error, tests generated from text
    "h11": ("0.14.0", (), {}),  # tests inside the package (h11/tests), helper modules, parametrize
    "colorama": ("0.4.6", (), {}),  # *_test.py files, unittest skipUnless, mock.patch decorators on methods
    # module-level objects answering every attribute (glom's T, not a fixture); the same 1 failed (no `glom`
    # executable on PATH)
    "glom": ("23.5.0", ("attrs", "face", "boltons", "pyyaml", "tomli"), {}),
    # conftest pytest_addoption/pytest_configure/collect_ignore, pytest_generate_tests parametrizing a name only
    # a fixture requests, a fixture writing request.keywords for another
    "parso": ("0.8.4", (), {}),
    # setup.cfg python_files with a folder (test/*test_*.py), python_classes = *Test; the same 3 failed (the
    # environment's pygments renders differently)
    "mako": ("1.3.5", ("markupsafe",), {}),
    # pytest-asyncio's asyncio mark (strict mode), pytest-mock, pytest-timeout installed, parametrized classes
    # (virtualenv: tests/test_virtualenv.py imports it; without it both runners count one collection error)
    "filelock": (
        "3.16.1",
        ("pytest-mock", "pytest-timeout", "pytest-asyncio", "virtualenv"),
        {"PYTHONPATH": "src"},
    ),
    "distro": (
        "1.9.0",
        (),
        {"PYTHONPATH": "src"},
    ),  # test classes with setup_method(self, method), test data folders
    "termcolor": ("2.5.0", (), {"PYTHONPATH": "src"}),  # stacked parametrize with capsys
    "iso8601": ("2.1.0", ("hypothesis", "pytz"), {}),  # hypothesis @given, the test module inside the package
    "pyrsistent": ("0.20.0", ("hypothesis",), {}),  # hypothesis stateful tests, importorskip
    "configobj": ("5.0.9", (), {"PYTHONPATH": "src"}),  # tests package inside src/, tmpdir (py.path)
    "asgiref": ("3.8.1", ("pytest-asyncio",), {}),  # asyncio_mode = strict, async tests and threads, xfail
    "msgpack": ("1.1.0", (), {}),  # a `test` folder, the pure-Python fallback, pytest.raises
    "blinker": ("1.8.2", ("pytest-asyncio",), {"PYTHONPATH": "src"}),  # filterwarnings = error, async tests
    # @given methods of test classes under parametrize (Hypothesis's pytest plugin lifts a health check for
    # them); the same 6 failed (reprs of the environment's newer enum and hpack)
    "h2": ("4.1.0", ("hypothesis", "hyperframe", "hpack"), {"PYTHONPATH": "src"}),
    # tests inside the package (bs4/tests) sharing base classes from its __init__.py; the same 2 failed (the
    # environment's newer soupsieve)
    "beautifulsoup4": ("4.12.3", ("soupsieve",), {}),
    "rfc3986": ("2.0.0", (), {"PYTHONPATH": "src"}),  # conftest fixtures with params, 2,800 tests
    "munch": ("4.0.0", (), {}),  # fixture(name=...), a skip inside a fixture, parametrized fixtures
    "tomlkit": ("0.13.2", ("pyyaml",), {}),  # tests generated from the toml-test files, parametrize ids
    "janus": ("1.0.0", ("pytest-asyncio",), {}),  # pytest-asyncio marks with filterwarnings = error, threads
    "wsproto": ("1.2.0", ("h11",), {"PYTHONPATH": "src"}),  # testpaths = test in setup.cfg, parametrize
    "outcome": ("1.3.0.post0", ("pytest-asyncio",), {"PYTHONPATH": "src"}),  # module-level pytestmark asyncio
    # doctests: `--doctest-glob='*.rst'` and `--doctest-modules` in addopts, doctest_namespace filled by an
    # autouse fixture of conftest.py, a conftest.py's and a package's own docstrings
    # (pytest-cov: its addopts' --cov and --no-cov-on-fail are pytest-cov's, without which pytest refuses them
    # and prints no counts)
    "semver": ("3.0.2", ("pytest-cov",), {"PYTHONPATH": "src"}),
    # doctests: `--doctest-glob=*.md` (its tests.md, one test), a tests package inside the library
    "voluptuous": ("0.15.2", (), {}),
    # doctests: `--doctest-modules` in pytest.ini (jaraco's skeleton), NORMALIZE_WHITESPACE and ELLIPSIS,
    # a docs/conf.py and the package's modules collected for their docstrings alone, xfail marks
    "inflect": ("7.4.0", ("more_itertools", "typeguard"), {}),
    # doctests of jaraco's skeleton: `--doctest-modules` only, a package in a namespace folder (as `classes`)
    "jaraco.classes": ("3.4.0", (), {}),
    # `consider_namespace_packages` (jaraco/collections imports as jaraco.collections), a tests folder next to
    # the doctests, the library's plain asserts (not rewritten under --doctest-modules)
    "jaraco.collections": ("5.1.0", ("jaraco.text",), {}),
    # the same, plus modules whose names are no identifiers (jaraco/text/to-dvorak.py, relative imports)
    "jaraco.text": (
        "4.0.0",
        ("jaraco.functools", "jaraco.context", "autocommand", "inflect", "more_itertools"),
        {},
    ),
    # a test monkeypatching time.time with a short iterator (rt's own clocks are bound at start-up)
    "funcy": ("2.1", ("whatever",), {}),
    # self.skipTest inside self.subTest (that subtest alone is skipped), filterwarnings = error, CLI subprocesses
    "python-slugify": ("9.2.0", ("text-unidecode",), {}),
    # pytest_plugins = ["pytester"] (nested pytest runs, sys.modules put back after each test); the same 5 failed:
    # no mypy on PATH, whose test's chdir then breaks the relative PYTHONPATH of three subprocess tests
    "typeguard": ("4.6.0", (), {"PYTHONPATH": "src"}),
    # a conftest.py's pytest_collect_file returning pytest's DoctestModule for the package's modules
    "babel": ("2.16.0", ("freezegun", "pytz"), {}),
    "netaddr": ("1.3.0", (), {}),
    # --doctest-modules, -p pytest_cov and --cov in addopts (its .coveragerc loads Cython's coverage plugin)
    "frozenlist": ("1.8.0", ("cython", "pytest-cov"), {"FROZENLIST_NO_EXTENSIONS": "1"}),
    "aiosignal": ("1.4.0", ("frozenlist", "pytest-asyncio", "pytest-cov"), {}),  # asyncio_mode = auto
    "python-box": ("8.0.0", ("ruamel.yaml", "tomli-w", "toon-format", "pyyaml", "msgpack"), {}),
    "addict": ("2.4.0", (), {}),  # one test module at the root, unittest
    # its tests read its own installed metadata: apispec itself is installed, the sdist's src shadows it
    "apispec": (
        "6.10.1",
        ("apispec==6.10.1", "marshmallow", "openapi-spec-validator", "pyyaml"),
        {"PYTHONPATH": "src"},
    ),
    "wtforms": ("3.3.2", ("markupsafe", "babel", "email-validator", "sqlalchemy"), {"PYTHONPATH": "src"}),
    "Unidecode": ("1.4.0", (), {}),  # a `tests` folder of unittest.TestCase classes, warnings checks
    "webcolors": ("25.10.0", (), {"PYTHONPATH": "src"}),  # unittest classes, generated test data
    "fqdn": ("1.6.0", (), {}),  # unittest.TestCase in a tests package
    # a module calling warnings.simplefilter('error') at import, then a `TestSuite` class with an __init__:
    # pytest's collection warning for it becomes a collection error (1 error, the run interrupted)
    "Markdown": ("3.7", ("pyyaml",), {}),
    # pytest-regressions' file_regression/data_regression fixtures, pytest-timeout's ini timeout, cmark spec
    "markdown-it-py": (
        "4.3.0",
        (
            "mdurl",
            "flit_core",
            "pytest-regressions",
            "pytest-timeout",
            "requests",
            "linkify-it-py",
            "mdit-py-plugins",
        ),
        {},
    ),
    # a src layout; the same 1 failed (run as root: a file made unreadable can still be read)
    "environs": (
        "15.2.0",
        ("marshmallow", "python-dotenv", "dj-database-url", "dj-email-url", "django-cache-url"),
        {"PYTHONPATH": "src"},
    ),
    # async suites: a fixture whose params carry pytest-asyncio's and pytest-trio's marks (one test per backend);
    # the same 10 failed (this environment's newer trio); the starlette and httpx its tests were written for
    "asgi-lifespan": (
        "2.1.0",
        ("pytest-asyncio", "pytest-trio", "starlette==0.26.1", "httpx==0.27.2", "pytest-cov"),
        {"PYTHONPATH": "src"},
    ),
    # pytest-asyncio's pytest_asyncio_loop_factories hook: a loop with a virtual clock
    "aiostream": ("0.8.1", ("pytest-asyncio", "pytest-cov"), {}),
    "asyncer": ("0.0.18", ("typer", "httpx"), {}),  # anyio-marked tests on asyncio and trio
    "asyncstdlib": ("3.14.0", (), {}),  # its own sync runner around coroutines
    # a module-level catch_warnings(record=True) around an import that warns with stacklevel=2 (test modules
    # are imported under pytest's warning filters, and the importing file is named), python_files = tests.py
    "defusedxml": ("0.7.1", ("lxml",), {}),
    # tests inside the package (pytz/tests), a module-level test_suite() function returning a unittest suite
    "pytz": ("2026.6", (), {}),
    "isodate": ("0.7.2", (), {"PYTHONPATH": "src"}),  # filterwarnings = error, testpaths, src layout
    "xmltodict": ("1.0.4", (), {}),  # a tests package next to a single-module library
    # tests inside the package, parametrized over the referencing-suite's JSON files, pytest.xfail() in a test
    "referencing": ("0.37.0", ("rpds-py", "jsonschema"), {}),
    # a single test module at the sdist's root, tests driving a mocked datetime (session 8, sweep B)
    "schedule": ("1.2.2", ("pytz",), {}),
    "tinydb": ("4.9.0", ("pyyaml",), {}),  # parametrized fixtures of a conftest.py over storages
    # session 8, sweep A
    "parsimonious": ("0.11.0", (), {}),  # a tests package inside the library, unittest classes
    # [tool.pytest] (pytest 9's TOML table) with pythonpath = ["src"] and --doctest-modules in addopts
    "validators": ("0.36.0", ("eth-hash[pycryptodome]",), {}),
    "toml": ("0.10.2", (), {}),  # the same 2 failed: the sdist lacks the toml-test data its tests read
    "colorlog": ("6.12.0", (), {}),  # logging handlers and streams around capture
    "ordered-set": ("4.1.0", (), {}),  # one test module at the root, pickling
    "python-json-logger": ("4.2.0", ("freezegun", "tzdata", "orjson", "msgspec"), {"PYTHONPATH": "src"}),
    # pure Python (no libyaml): legacy tests whose conftest.py wraps pytest_pycollect_makeitem to make an item
    # per data file, and pytest_ignore_collect; the libyaml test module is the 1 error under both
    "pyyaml": ("6.0.4", (), {"PYTHONPATH": "lib"}),
    # session 8, sweep C (async): pytest-asyncio's strict mode with a function loop scope, pytest-cov in addopts
    "async-timeout": ("5.0.1", ("pytest-asyncio", "pytest-cov"), {}),
    # its tests read its installed metadata (the same 1 failed: the version from git, which the sdist lacks)
    "aiolimiter": (
        "1.3.0",
        ("aiolimiter==1.3.0", "pytest-asyncio", "pytest-cov", "dunamai", "typing-extensions"),
        {"PYTHONPATH": "src"},
    ),
    # asyncio_mode = auto with asyncio_default_fixture_loop_scope = function, pythonpath = ["src"]
    "aiohappyeyeballs": ("2.7.1", ("pytest-asyncio", "pytest-cov"), {}),
    # session 9, sweep D (newest versions)
    "boltons": (
        "26.2.0",
        (),
        {},
    ),  # a tests folder with a conftest.py, doctest_optionflags in [tool.pytest.ini_options]
    "iniconfig": (
        "2.3.1",
        ("pytest-xdist",),
        {"PYTHONPATH": "src"},
    ),  # a package pytest itself imports, shadowed by src
    "cssselect": ("1.6.0", ("lxml", "pytest-cov", "sybil"), {}),  # testpaths, lxml
    # session 9, sweep E: *_test.py modules inside the package, `--ignore=` of two of them in addopts, hypothesis
    "fire": ("0.7.1", ("hypothesis", "levenshtein", "termcolor"), {}),
    # session 9, sweep F: a unittest suite in src/ next to the module it tests, whose public names it compares
    # with its __all__ (a helper module rt rewrites keeps its namespace)
    "typing-extensions": ("4.16.0", (), {}),
    "installer": (
        "1.1.0",
        ("pytest-xdist",),
        {"PYTHONPATH": "src"},
    ),  # wheels built in tmp_path, a src layout
    # testtools' TestCase, the suite's own pytest11 plugin (requests_mock fixture); the same 1 failed (this
    # environment's newer requests: `req.verify` is None)
    "requests-mock": ("1.12.1", ("requests", "fixtures", "purl", "testtools", "requests_futures"), {}),
    # session 10, sweep H (command-line libraries): pytest-mock, pytest-cov installed, addopts -q
    "cleo": ("2.1.0", ("crashtest", "rapidfuzz", "pytest-mock", "pytest-cov"), {"PYTHONPATH": "src"}),
    # @staticmethod above @pytest.fixture(scope="class") in a test class (pytest's getattr unwraps it)
    "cloup": ("4.0.0", ("click", "typing-extensions", "pytest-cov", "pytest-xdist"), {"PYTHONPATH": "src"}),
    # unittest TestCase classes with pytest-subtests installed, 1,840 tests with the subtests
    "configargparse": ("1.9.0", ("black", "mock", "toml", "PyYAML", "pytest-cov", "pytest-subtests"), {}),
    # filterwarnings = error with ignores by module, Sphinx builds in tests
    "everett": ("3.5.0", ("configobj", "PyYAML", "sphinx"), {"PYTHONPATH": "src"}),
    "logzero": ("1.7.0", (), {}),  # logging handlers writing to the captured streams
    "pathvalidate": ("3.3.1", ("allpairspy", "click", "Faker", "pytest-md-report"), {}),  # 4,184 tests
    "shortuuid": ("1.0.13", (), {}),  # the test module inside the package
    "hashids": ("1.3.1", (), {}),
    # its tests read its installed metadata (python-ulid itself installed; the sdist's ulid/ shadows it)
    "python-ulid": ("4.1.0", ("python-ulid==4.1.0", "freezegun", "pydantic", "pytest-cov"), {}),
    "appdirs": ("1.4.4", (), {}),  # a unittest module in a `test` package
    # session 10, sweep I (testing tools and pytest plugins): unittest classes a decorator fills with one
    # method per data item (files of JSON and YAML data), async unittest methods (aiounittest)
    "ddt": ("1.7.2", ("six", "pyyaml", "aiounittest"), {}),
    # python_files = test*.py in setup.cfg's [tool:pytest], unittest classes with subTest (43 subtests passed)
    "mock": ("5.2.0", (), {}),
    # session 10, sweep G (newest versions, each suite's own test dependencies)
    "text-unidecode": ("1.3", (), {"PYTHONPATH": "src"}),  # one test module at the sdist's root, a src layout
    "inflection": ("0.5.1", (), {}),  # one test module at the root, 455 parametrized tests
    "deepmerge": ("4.0.0", (), {}),  # a tests package inside the library
    "docstring-parser": ("0.18.0", (), {}),  # tests inside the package, parametrize ids
    # unittest.TestCase modules named *_test.py; the same 15 failed (its CLI tests run `python -m json5`
    # against an installed json5)
    "json5": ("0.17.3", (), {}),
    # --doctest-modules and --ignore in pytest.ini's addopts, xfail marks; the same 1 failed (a doctest of
    # monospaced_width: this environment's newer wcwidth); ftfy itself installed for its CLI tests
    "ftfy": ("6.3.1", ("wcwidth", "ftfy==6.3.1"), {}),
    # setup.cfg's [tool:pytest] with testpaths and filterwarnings = error; the same 2 failed (no DNS here, and
    # this Python's IPv6 address formatting)
    "email-validator": ("2.4.0", ("dnspython", "idna"), {}),
    # session 10: its tests compare the first line of a rewritten assert's message (`assert ('fo',) == ('',)`)
    # and pytest's `Use -v to get more diff`, through its own rewritten assert_called_with; itself installed
    # (its pytest11 entry point) for the pytester runs of its tests
    "pytest-mock": ("3.17.0", ("pytest-mock==3.17.0", "pytest-asyncio", "mock"), {"PYTHONPATH": "src"}),
    # pytest-benchmark's --benchmark-skip in addopts: an option a plugin registers takes its value from addopts
    "portion": ("2.6.3", ("portion==2.6.3", "pytest-benchmark"), {}),
    # python_functions = test_* simple_* complex_* state_*, a root conftest.py's pytest_addoption and
    # pytest_generate_tests, --doctest-modules over the package (its fuzzing targets need atheris: the same 2
    # collection errors); the same 8 failed (warnings of this environment's newer numpy and pandas)
    "jsonpickle": (
        "4.1.4",
        ("pytest-benchmark", "numpy", "pandas", "simplejson", "ujson", "ecdsa", "feedparser", "pymongo"),
        {},
    ),
    # an installed plugin's pytest_collect_file (pytest-relaxed collects every .py file of tests/ as its SpecModule,
    # nested classes too, and replaces pytest's terminal reporter); the same 114 failed (no terminal here)
    "invoke": ("3.0.3", ("pytest-relaxed", "icecream"), {}),
    # a conftest.py's pytest_collect_file collecting the conftest.py file itself (37 items, skipped: no mypy)
    "wrapt": ("2.5.2", (), {"PYTHONPATH": "src", "WRAPT_INSTALL_EXTENSIONS": "false"}),
    # session 11: pytest-lazy-fixtures' hooks (pytest_fixture_setup, pytest_make_parametrize_id, a
    # pytest_generate_tests wrapper) resolve lf("fixture") values in parametrize, with pytest's ids
    "prettytable": ("3.18.0", ("pytest-lazy-fixtures==1.4.1", "wcwidth"), {"PYTHONPATH": "src"}),
    # session 11, sweep J (networking, web and async): a skipped test in a `src` layout
    "hyperframe": ("6.1.0", (), {"PYTHONPATH": "src"}),
    "bottle": ("0.13.4", (), {}),  # one module, a `test` folder of unittest-style classes
    # `--strict-config`, `xfail_strict`, `filterwarnings = once::Warning`; the same 1 failed (legacy metadata)
    "service-identity": (
        "26.1.0",
        ("cryptography", "pyasn1", "pyasn1-modules", "idna", "pyopenssl", "attrs"),
        {"PYTHONPATH": "src"},
    ),
    # the same 1 failed: its CLI test runs `python -m trustme` in a temporary folder, `src` not on its path
    "trustme": ("1.2.1", ("cryptography", "idna", "pyopenssl", "service-identity"), {"PYTHONPATH": "src"}),
    # pytest-trio's trio-marked tests next to pytest-asyncio's and twisted's (its pytest_runtest_call)
    "pyee": ("13.0.1", ("pytest-asyncio", "pytest-trio", "trio", "twisted", "pytest-twisted"), {}),
    # trio mode turned on by a conftest.py's collection hook, pytest-trio's autojump_clock
    "tricycle": ("0.4.1", ("trio", "pytest-trio", "async-generator"), {}),
    # pytest-trio's nursery fixture in sync and async fixtures; the same 2 failed (this environment's newer h2)
    "hypercorn": (
        "0.18.0",
        (
            "httpx",
            "hypothesis",
            "mock",
            "pytest-asyncio",
            "pytest-trio",
            "trio",
            "pytest-cov",
            "h11",
            "h2",
            "priority",
            "wsproto",
        ),
        {"PYTHONPATH": "src"},
    ),
    # pytest-httpbin's session server, `pythonpath = "."`
    "requests-futures": ("1.1.0", ("requests", "pytest-httpbin", "pytest-cov"), {}),
    # session 11, sweep K: setup.cfg's filterwarnings = error, xfail marks
    "bleach": ("6.4.0", ("tinycss2",), {}),
    # pytest-cov in required_plugins and addopts, pythonpath, --doctest-glob='*.rst'
    "pycountry": ("26.2.16", ("pytest-cov",), {}),
    # 61 unittest modules; the same 6 failed (its CLI tests need num2words installed)
    "num2words": ("0.5.14", ("docopt", "delegator.py"), {}),
    # 16968 tests from JSON files, norecursedirs with a path
    "tinycss2": ("1.5.1", ("webencodings",), {}),
    # unittest subTest (500 subtests passed)
    "pycparser": ("3.12", (), {"PYTHONPATH": "."}),
    # 149 unittest modules in test/, subTest (1868 subtests passed), skips of optional dependencies
    "docutils": ("0.23", (), {"PYTHONPATH": "."}),
    # session 12, sweep M (async, network, web): unittest IsolatedAsyncioTestCase classes with ddt's data; the
    # same 3 failed (they reach the network); aiohttp 3.13's ClientResponse is newer than its mocks
    "aioresponses": ("0.7.9", ("aiohttp<3.13", "pytest-asyncio", "ddt", "yarl", "packaging"), {}),
    # pytest-asyncio's strict mode, coverage in addopts
    "httpx-sse": (
        "0.4.3",
        ("httpx", "pytest-asyncio", "pytest-cov", "sse-starlette", "starlette"),
        {"PYTHONPATH": "src"},
    ),
    "flask-cors": ("6.0.5", ("flask",), {}),  # flask's test client, a skipped test, a warning
    # tests inside the package (websocket/tests), unittest skips of the network tests, subTest
    "websocket-client": ("1.9.2", ("websockets",), {}),
    # tests inside the package, a conftest.py whose pytest_pyfunc_call runs the coroutine tests on a loop of its own
    "async-generator": ("1.10", (), {}),
    # session 12, sweep L (projects with pytest plugins of their own): the plugin's own suites, the plugin itself
    # installed (its pytest11 entry point): pytester runs; the datafiles mark copying files into tmp_path
    "pytest-datafiles": ("3.0.1", ("pytest-datafiles==3.0.1",), {}),
    # pytest-freezer's freezer fixture and freeze_time mark over freezegun
    "pytest-freezer": ("0.4.9", ("pytest-freezer==0.4.9",), {}),
    # the same 5 set-up errors (tests asking for pytester, which its configuration does not enable)
    "pytest-unordered": ("0.8.0", ("pytest-unordered==0.8.0",), {}),
    # --doctest-modules and --doctest-glob='*.rst' with -p no:warnings in setup.cfg's addopts, WSGI apps
    "webtest": ("3.0.7", ("webtest==3.0.7", "PasteDeploy", "pyquery", "WSGIProxy2"), {}),
    # session 13, sweep N (doctests, Hypothesis, unittest, warnings and capture; docstring-parser, mock and
    # logzero were already listed above): unittest subTest, a tests folder of many small files
    "simpleeval": ("1.0.8", (), {}),
    "webencodings": ("0.6.1", (), {}),
    # unittest skips and subTest, Django's tests skipped without it, 524 deprecation warnings counted
    "semantic-version": ("2.10.0", (), {}),
    # python_files with a folder (examples/*.py tests/*.py), pythonpath = src/
    "parsy": ("2.2", (), {}),
    # --strict-markers and --doctest-modules in setup.cfg's addopts, python_files = *.py, xfail
    "boolean.py": ("5.0", (), {}),
    # hypothesis, collect_ignore in setup.cfg's [tool:pytest] (pytest's "Unknown config option" warning)
    "rfc3339-validator": ("0.1.4", ("hypothesis", "strict-rfc3339", "six"), {}),
    # session 13, sweep O: tests inside the package, its referencing registry of bundled schemas
    "jsonschema-specifications": ("2025.9.1", ("referencing",), {}),
    # session 14, sweep Q: a src layout's redirecting import hooks, each test with its own sys.meta_path
    "editables": ("0.6", (), {"PYTHONPATH": "src"}),
    # --strict-config, filterwarnings = error, xfail_strict, 88 version-dependent skips
    "pyproject-metadata": ("0.12.1", ("packaging",), {}),
    # bdist_wheel through setuptools in tmp_path projects, filterwarnings ignoring _pytest's own warnings
    "wheel": ("0.48.0", ("packaging", "setuptools"), {"PYTHONPATH": "src"}),
    # unittest classes in the package's tests folder (testpaths), 8 subtests, doctest_optionflags
    "pystache": ("0.6.8", (), {}),
    # SQLite databases in fixtures and unittest classes, alembic migrations
    "dataset": ("2.0.0", ("sqlalchemy", "alembic"), {}),
    # session 14, sweep P: a class's fixture that returns a generator (not a yield fixture), pure Python
    "frozendict": ("2.5.1", (), {"PYTHONPATH": "src"}),
    # parametrized unittest-free tests of a package at the root
    "pyhumps": ("3.8.0", (), {}),
    # jsonschema validators in its merge strategies, 182 deprecation warnings
    "jsonmerge": ("1.9.2", ("jsonschema",), {}),
    # unittest classes inside the package (aniso8601/tests, aniso8601/builders/tests)
    "aniso8601": ("10.0.1", (), {}),
    # unittest classes under testpaths, a src layout
    "colander": ("2.0", ("translationstring", "iso8601"), {"PYTHONPATH": "src"}),
    # pytest.ini's addopts with pytest-metadata's --metadata KEY VALUE, pytest-html's --html; the same 1 failed
    "parse-type": ("0.6.6", ("parse", "six", "pytest-html"), {}),
    # 1430 tests generated from the CommonMark and GFM spec files, extensions with pygments and slugify
    "marko": ("2.2.4", ("python-slugify", "pygments", "objprint"), {}),
    # parameterized's expand on unittest methods, subtests, a `test` folder of packages
    "mistletoe": ("1.6.0", ("parameterized", "pygments"), {}),
    # pythonpath = [".", "tests/unit"] beside a src layout; the same 1 failed (test_develop_ctor_w_path reads
    # the metadata of pkginfo installed in development mode, which the bench does not install)
    "pkginfo": ("2.0", ("wheel",), {"PYTHONPATH": "src"}),
    # unittest suites inside the package (genshi/tests, genshi/template/tests), doctests of the module docs
    "genshi": ("0.7.12", (), {}),
    # fixture files compared in parametrized tests; the markdown ones skipped without its md extra (cmarkgfm)
    "readme-renderer": ("46.0", ("nh3", "docutils", "pygments"), {}),
    # session 15, sweep S (scientific, geometry, file formats): a src layout through pythonpath = ["src"],
    # conftest.py fixtures building on each other
    "astral": ("3.2", ("tzdata", "freezegun"), {}),
    # unittest classes inside the package (geographiclib/test)
    "geographiclib": ("2.1", (), {}),
    # setup.cfg's addopts naming the tests folder, python_files = test*.py, norecursedirs
    "odfpy": ("1.4.1", ("defusedxml",), {}),
    # setup.cfg's addopts with -vv and pytest-cov's --cov options
    "python-barcode": ("0.16.1", ("pytest-cov", "Pillow"), {}),
    # pythonpath = "src" with testpaths, numpy-dependent tests, pickling of the library's classes
    "affine": ("3.0.1", ("numpy",), {}),
    # hypothesis strategies over tile coordinates, click's CliRunner
    "mercantile": ("1.2.1", ("hypothesis", "click"), {}),
    # tests inside the package, xfail marks, numpy's testing helpers
    "quantities": ("0.16.4", ("numpy",), {}),
    # session 15, sweep R: JOSE objects signed with cryptography's keys, test data files next to the tests
    "josepy": ("2.2.0", ("cryptography",), {"PYTHONPATH": "src"}),
    # pyproject.toml's addopts (--doctest-modules: the root's tasks.py imports invoke; pytest-cov's reports,
    # --junitxml) win over setup.cfg's [tool:pytest] and its asyncio_mode = auto, which neither runner reads
    "cacheout": ("0.17.0", ("pytest-asyncio", "pytest-cov", "invoke"), {"PYTHONPATH": "src"}),
    # a tests package whose conftest.py has parametrized fixtures, pytest-rerunfailures installed, 213 warnings
    "logbook": ("1.10.1", ("pytest-rerunfailures",), {"PYTHONPATH": "src"}),
    # session 16, sweep U (command-line and text tools): a test package of plain classes over YAML sources
    "confuse": ("2.3.0", ("pyyaml",), {}),
    # a tests package with relative imports of its helpers (from .base import ...), a src layout
    "argh": ("0.31.3", (), {"PYTHONPATH": "src"}),
    # click's CliRunner over colored help, a tox.ini with no pytest section
    "click-help-colors": ("0.9.4", ("click",), {}),
    # unittest TestCase classes in tests/, codecs registered at import
    "translitcodec": ("0.7.0", (), {}),
    # session 16, sweep T (web-framework extensions): filterwarnings = error, Flask's test client, flask-babel
    "flask-wtf": (
        "1.3.0",
        ("flask", "wtforms", "flask-babel", "email-validator", "flask-reuploaded"),
        {"PYTHONPATH": "src"},
    ),
    # a conftest.py's fixtures over environment values, Django's settings helpers
    "django-environ": ("0.14.0", ("django",), {}),
    # session 17, sweep V (GraphQL, job queues): pytest-describe blocks, asyncio_mode = auto, a src layout
    "graphql-relay": (
        "3.2.0",
        ("graphql-core~=3.2.0", "pytest-asyncio", "pytest-describe"),
        {"PYTHONPATH": "src"},
    ),
    # test_* classes (python_classes = test_*) whose nose-style setup pytest 9 does not call: the same 4 failed
    "vine": ("5.1.0", (), {}),
    # session 17, sweep W (packaging tools, Django apps): a tests package with sample projects built to wheels
    "flit-core": ("4.2.0", ("testpath",), {}),
    # a build backend in a src layout, pytest-gitconfig's fixtures, git repositories made by the tests (the
    # same 2 failed under both here: its C-extension demos' setup.py build fails in the bench's environment)
    "pdm-backend": ("2.5.0", ("pytest-gitconfig", "setuptools"), {"PYTHONPATH": "src"}),
    # pytest-django from [tool.pytest.ini_options]' DJANGO_SETTINGS_MODULE, template packs of other projects
    "django-crispy-forms": (
        "2.7",
        ("django", "pytest-django", "crispy-bootstrap3", "crispy-bootstrap4"),
        {},
    ),
    # session 17, sweep X (scheduling and calendars): subTest loops over cron expressions (148 subtests)
    "cronsim": ("2.6", (), {"PYTHONPATH": "."}),
    # a single root module with its test module beside it, no configuration
    "isoweek": ("1.3.3", (), {}),
    # --import-mode=importlib, --strict-config and --strict-markers from [tool.pytest.ini_options], a src
    # layout, 5903 parametrized cases over date tables
    "hijridate": ("2.6.0", (), {"PYTHONPATH": "src"}),
}
#: pytest arguments a suite needs in this environment, with the reason
PYTEST_ARGS: dict[str, tuple[str, ...]] = {
    # the environment's platformdirs (a dependency of the repo's tools) registers a pytest plugin that the
    # suite's src/platformdirs, first on the path, does not have: pytest refuses to start without this
    "platformdirs": ("-p", "no:platformdirs"),
    # tests/test_matplotlib_cases.py needs matplotlib (not installed): pytest stops on that collection error
    # unless told to go on, as rt does (both are given the option: RT_ARGS)
    "pyparsing": ("--continue-on-collection-errors",),
    # tests/test_libyaml_recursion_control.py needs the libyaml extension (not built: the pure-Python suite)
    "pyyaml": ("--continue-on-collection-errors",),
    # its fuzzing targets import atheris (not installed), collected by --doctest-modules
    "jsonpickle": ("--continue-on-collection-errors",),
    # the newest pytest-asyncio warns in pytest_configure without this ini value, and the suite's
    # filterwarnings = error turns that into pytest's INTERNALERROR, and rt's (both are given it: RT_ARGS)
    "blinker": ("-o", "asyncio_default_fixture_loop_scope=function"),
    "janus": ("-o", "asyncio_default_fixture_loop_scope=function"),
    # at the root pytest-relaxed's hook takes tasks.py and sites/*.py too, which need invoke's dev tools: both
    # runners stop with the same 5 collection errors; its tests are run as its CI runs them
    "invoke": ("tests",),
}
#: the options of PYTEST_ARGS that rt test takes too, given to both
RT_ARGS = ("--continue-on-collection-errors", "tests", "-o", "asyncio_default_fixture_loop_scope=function")
ALL_SUITES = {**SUITES, **COMPAT_SUITES}
#: this checkout, whose rt-kernel and rt-testrunner a suite's own environment installs
REPO = Path(__file__).resolve().parents[1]
#: the Python of a suite's own environment (`--env suite`): the oldest rt supports, as CI images often have
SUITE_PYTHON = "3.11"
SCRUBBED = ("AGENT", "CLAUDECODE", "REPL_ID", "GITHUB_ACTIONS", "PYTEST_ADDOPTS")
PYTEST_WORDS = {
    "passed": "passed",
    "failed": "failed",
    "skipped": "skipped",
    "xfailed": "xfailed",
    "xpassed": "xpassed",
    "error": "errors",
    "errors": "errors",
}
RT_WORDS = {
    "pass": "passed",
    "fail": "failed",
    "skip": "skipped",
    "xfail": "xfailed",
    "xpass": "xpassed",
    "error": "errors",
    "errors": "errors",
}


def download(name: str, version: str, into: Path) -> Path:
    """The unpacked sdist folder of ``name==version``."""
    command = [sys.executable, "-m", "pip"] if _has_pip() else ["uvx", "pip"]
    # the sdist of the project alone: its build dependencies (which pip installs to read the sdist's metadata)
    # may come as wheels (pytest-randomly's build backend needs maturin, which would otherwise be compiled)
    subprocess.run(
        [
            *command,
            "download",
            "--quiet",
            "--no-deps",
            "--no-binary",
            name,
            f"{name}=={version}",
            "-d",
            str(into),
        ],
        check=True,
    )
    archive = next(
        p
        for p in into.iterdir()
        if p.name.endswith((".tar.gz", ".zip")) and _normalized(p.name).startswith(_normalized(name))
    )
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return next(
        p
        for p in into.iterdir()
        if p.is_dir() and _normalized(p.name).startswith(_normalized(f"{name}-{version}"))
    )


def _normalized(name: str) -> str:
    """A distribution's name as its sdist may spell it (``jaraco.text`` is ``jaraco_text-4.0.0.tar.gz``)."""
    return re.sub(r"[-_.]+", "-", name.lower())


def _has_pip() -> bool:
    return (
        subprocess.run(
            [sys.executable, "-m", "pip", "--version"], capture_output=True, check=False
        ).returncode
        == 0
    )


def install_extra(extra: tuple[str, ...], into: Path) -> str | None:
    """``--env dev``: the suite's own test dependencies, installed into a folder put on PYTHONPATH for both
    runners (so neither pays for an environment manager's start-up in the timings)."""
    if not extra:
        return None
    subprocess.run(
        ["uv", "pip", "install", "--quiet", "--python", sys.executable, "--target", str(into), *extra],
        check=True,
    )
    return str(into)


def locked_pins() -> list[str]:
    """pytest and rt's runtime dependencies at uv.lock's versions, as ``uv pip install`` constraints: the
    suite's environment runs the pytest (and pluggy, attrs, anyio) rt is developed and tested against."""
    lock = tomllib.loads((REPO / "uv.lock").read_text())
    pytest_version = next(p["version"] for p in lock["package"] if p["name"] == "pytest")
    exported = subprocess.run(
        [
            "uv",
            "export",
            "--frozen",
            "--no-hashes",
            "--no-dev",
            "--package",
            "rt-testrunner",
            "--no-emit-workspace",
            "--no-header",
            "--no-annotate",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [f"pytest=={pytest_version}", *(ln for ln in exported.splitlines() if ln.strip() and ln[0] != "#")]


def suite_environment(name: str, extra: tuple[str, ...], root: Path) -> Path:
    """``--env suite``: the Python of a fresh virtual environment for the suite alone (pytest, rt from this
    checkout, the suite's test dependencies), as a user of the project has it. Kept in ``root`` and reused
    while what it was made from (requirements and pins) is the same; rt is installed editable, so changes
    to this checkout's code need no reinstall."""
    venv = root / f"{_normalized(name)}-venv"
    python = venv / "bin" / "python"
    pins = locked_pins()
    requirements = ["pytest", "-e", str(REPO / "kernel"), "-e", str(REPO / "plugins" / "testrunner"), *extra]
    stamp = json.dumps({"python": SUITE_PYTHON, "pins": pins, "requirements": requirements})
    marker = venv / "realsuites-env.json"
    if python.exists() and marker.exists() and marker.read_text() == stamp:
        return python
    if venv.exists():
        shutil.rmtree(venv)
    subprocess.run(["uv", "venv", "--quiet", "--python", SUITE_PYTHON, str(venv)], check=True)
    constraints = venv / "locked-pins.txt"
    constraints.write_text("\n".join(pins) + "\n")
    subprocess.run(
        ["uv", "pip", "install", "--quiet", "--python", str(python), "-c", str(constraints), *requirements],
        check=True,
    )
    marker.write_text(stamp)
    return python


def pytest_counts(output: str) -> dict[str, int]:
    line = [ln for ln in output.strip().splitlines() if re.search(r"\d+ (passed|failed|error|skipped)", ln)][
        -1
    ]
    found = {}
    for number, word in re.findall(r"(\d+) (passed|failed|skipped|xfailed|xpassed|errors?)\b", line):
        found[PYTEST_WORDS[word]] = int(number)
    return found


def rt_counts(output: str) -> dict[str, int]:
    found = {}
    for number, word in re.findall(r"^ (\d+) (pass|fail|skip|xfail|xpass|errors?)$", output, re.MULTILINE):
        if int(number):
            found[RT_WORDS[word]] = int(number)
    return found


def run(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, str]:
    """Wall time, CPU time (user + system of the process and its children) and output of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=3600
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout + done.stderr


def floor(python: str, folder: Path, env: dict[str, str], pytest_cpu: float) -> str:
    """The suite's own work (bench/suite_floor.py) plus a bare interpreter's start-up, against pytest."""
    command = [python, str(Path(__file__).with_name("suite_floor.py"))]
    done = subprocess.run(
        command, cwd=folder, env=env, capture_output=True, text=True, check=False, timeout=3600
    )
    spent = json.loads(done.stdout.strip().splitlines()[-1])
    bare = min(run([python, "-c", "pass"], folder, env)[1] for _ in range(3))
    total = bare + spent["imports"] + spent["tests"]
    return (
        f"  floor (CPU): interpreter {bare:.2f}s + the suite's imports {spent['imports']:.2f}s + its tests "
        f"{spent['tests']:.2f}s = {total:.2f}s, {total / pytest_cpu:.2f}x pytest's CPU time"
    )


def warm_server(python: str, folder: Path, env: dict[str, str]) -> Path | None:
    """The warm server's socket for runs in ``folder`` with ``env`` (its pid in the .lock, its runs in the .runs
    file next to it), once it listens; None when it did not start within a minute."""
    ask = "import os; from rt import _warm; print(_warm.socket_path(_warm.key_material(os.getcwd())))"
    done = subprocess.run(
        [python, "-c", ask], cwd=folder, env=env, capture_output=True, text=True, check=False, timeout=60
    )
    socket_path = Path(done.stdout.strip())
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if socket_path.exists():
            return socket_path
        time.sleep(0.1)
    return None


def warm_child_cpu(socket_path: Path, runs_before: int) -> list[float]:
    """The CPU time (user + system) of each run forked since the first ``runs_before`` the server logged."""
    lines = socket_path.with_suffix(".runs").read_text().splitlines()[runs_before:]
    return [float(line.split()[1]) + float(line.split()[2]) for line in lines]


def stop_warm_server(socket_path: Path) -> None:
    try:
        os.kill(int(socket_path.with_suffix(".lock").read_text().strip()), 15)
    except (OSError, ValueError):
        pass


def _has_xdist(python: str) -> bool:
    return subprocess.run([python, "-c", "import xdist"], capture_output=True, check=False).returncode == 0


def measure(
    name: str,
    root: Path,
    repeat: int,
    bytecode: bool = True,
    with_floor: bool = False,
    workers: int = 0,
    where: str = "suite",
    warm: bool = False,
) -> tuple[bool, str]:
    version, extra, variables = ALL_SUITES[name]
    folder = download(name, version, root / name)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RT_") and k not in SCRUBBED}
    if where == "suite":
        venv_python = suite_environment(name, extra, root)
        python = str(venv_python)
        # as in the activated environment: its bin folder first, this one's (rt's dev tools) off the PATH
        ours = str(Path(sys.executable).parent)
        path = [
            str(venv_python.parent),
            *(p for p in env.get("PATH", "").split(os.pathsep) if p and p != ours),
        ]
        env.update(VIRTUAL_ENV=str(venv_python.parent.parent), PATH=os.pathsep.join(path))
        env.pop("PYTHONPATH", None)
        deps = None
    else:
        python = sys.executable
        deps = install_extra(extra, root / f"{name}-deps")
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(variables)
    if deps is not None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH"), deps) if p)
    # --verbosity=-1, not -q: a suite whose addopts has -q too would run at -qq, which prints no counts
    pytest_base = [
        python,
        "-m",
        "pytest",
        "--verbosity=-1",
        "-p",
        "no:cacheprovider",
        *PYTEST_ARGS.get(name, ()),
    ]
    pytest_cmd = [*pytest_base, "-p", "no:xdist"]
    # the `rt` console script next to this Python, as users run it (`python -m rt` adds runpy's start-up)
    script = Path(python).with_name("rt")
    rt_cmd = [str(script), "test"] if script.exists() else [python, "-m", "rt", "test"]
    # the same verbosity as pytest's: it decides which subtests count (a plain run leaves passed and skipped
    # subtests out of its summary, under either runner)
    rt_cmd += ["--verbosity=-1", *(arg for arg in PYTEST_ARGS.get(name, ()) if arg in RT_ARGS)]
    if bytecode:  # the untimed warm-up run of each
        run(pytest_cmd, folder, env)
        run(rt_cmd, folder, env)
    pytest_times, rt_times, pytest_cpu, rt_cpu = [], [], [], []
    pytest_out = rt_out = ""
    # the parallel columns: rt test --parallel=N and pytest -n N (xdist), timed in the same alternation
    parallel: dict[str, tuple[list[str], list[float], list[float]]] = {}
    if workers:
        parallel["rt"] = ([*rt_cmd, f"--parallel={workers}"], [], [])
        if _has_xdist(python):
            parallel["xdist"] = ([*pytest_base, "-n", str(workers)], [], [])
    parallel_out: dict[str, str] = {}
    warm_env = {**env, "RT_TEST_WARM": "1"}
    warm_socket = None
    warm_times: list[float] = []
    warm_cpu: list[float] = []
    warm_out = ""
    if warm:
        run(rt_cmd, folder, warm_env)  # cold: it starts the server
        warm_socket = warm_server(python, folder, warm_env)
    for _ in range(repeat):
        wall, cpu, pytest_out = run(pytest_cmd, folder, env)
        pytest_times.append(wall)
        pytest_cpu.append(cpu)
        wall, cpu, rt_out = run(rt_cmd, folder, env)
        rt_times.append(wall)
        rt_cpu.append(cpu)
        for key, (command, walls, cpus) in parallel.items():
            wall, cpu, parallel_out[key] = run(command, folder, env)
            walls.append(wall)
            cpus.append(cpu)
        if warm_socket is not None:
            wall, cpu, warm_out = run(rt_cmd, folder, warm_env)
            warm_times.append(wall)
            warm_cpu.append(cpu)
    child_cpu = warm_child_cpu(warm_socket, 0) if warm_socket is not None else []
    if warm_socket is not None:
        stop_warm_server(warm_socket)
    try:
        expected = pytest_counts(pytest_out)
    except IndexError:  # pytest ran no test: say why (e.g. an addopts option of a plugin not installed)
        last = pytest_out.strip().splitlines()[-3:]
        return False, f"{name} {version}: pytest printed no counts: {' / '.join(last)}"
    got = rt_counts(rt_out)
    same = expected == got
    ratio = min(rt_times) / min(pytest_times)
    cpu_ratio = min(rt_cpu) / min(pytest_cpu)
    line = (
        f"{name} {version}: pytest {expected} in {min(pytest_times):.2f}s (CPU {min(pytest_cpu):.2f}s); "
        f"rt test {got} in {min(rt_times):.2f}s (CPU {min(rt_cpu):.2f}s); {ratio:.2f}x pytest's wall time, "
        f"{cpu_ratio:.2f}x its CPU time; outcomes {'SAME' if same else 'DIFFER'}"
    )
    if parallel:
        line += f"\n  {workers} workers:"
        for key, (_, walls, cpus) in parallel.items():
            counted = rt_counts(parallel_out[key]) if key == "rt" else _xdist_counts(parallel_out[key])
            agrees = counted == expected
            if key == "rt":
                same = same and agrees
            label = f"rt test --parallel={workers}" if key == "rt" else f"pytest -n {workers}"
            line += (
                f" {label} {'same outcomes' if agrees else f'outcomes DIFFER {counted}'} in {min(walls):.2f}s "
                f"(CPU {min(cpus):.2f}s), {min(walls) / min(pytest_times):.2f}x pytest's wall time;"
            )
        line = line.rstrip(";")
    if warm:
        if warm_socket is None or len(child_cpu) != len(warm_times):
            same = False
            line += "\n  rt test (warm): the warm server did not start or missed runs"
        else:
            counted = rt_counts(warm_out)
            agrees = counted == expected
            same = same and agrees
            total = [client + child for client, child in zip(warm_cpu, child_cpu, strict=True)]
            line += (
                f"\n  rt test (warm) {'same outcomes' if agrees else f'outcomes DIFFER {counted}'} in "
                f"{min(warm_times):.2f}s (CPU {min(total):.2f}s: client {min(warm_cpu):.2f}s, forked child "
                f"{min(child_cpu):.2f}s), {min(warm_times) / min(pytest_times):.2f}x pytest's wall time, "
                f"{min(total) / min(pytest_cpu):.2f}x its CPU time"
            )
    if with_floor:
        line += "\n" + floor(python, folder, env, min(pytest_cpu))
    return same, line


def _xdist_counts(output: str) -> dict[str, int]:
    try:
        return pytest_counts(output)
    except IndexError:  # no summary line: xdist failed to start on this suite
        return {"no summary": 1}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--suites", default=",".join(SUITES))
    parser.add_argument(
        "--keep", metavar="DIR", help="download into DIR and keep it (default: a temporary folder)"
    )
    parser.add_argument(
        "--no-bytecode",
        action="store_true",
        help="PYTHONDONTWRITEBYTECODE=1 and no warm-up run (every run compiles what has no .pyc)",
    )
    parser.add_argument(
        "--floor",
        action="store_true",
        help="also print each suite's floor: the CPU time of its own imports and tests (suite_floor.py)",
    )
    parser.add_argument(
        "--parallel",
        type=int,
        default=2,
        metavar="N",
        help="also time rt test --parallel=N and pytest -n N (default 2; 0: leave them out)",
    )
    parser.add_argument(
        "--warm",
        action="store_true",
        help="also time rt test forked from its warm server (RT_TEST_WARM=1), after one cold run",
    )
    parser.add_argument(
        "--env",
        choices=("suite", "dev"),
        default="suite",
        help="suite: a fresh environment per suite with only its own test dependencies (default); "
        "dev: this environment, with every installed pytest plugin",
    )
    options = parser.parse_args(argv)
    groups = {"compat": list(COMPAT_SUITES), "all": list(ALL_SUITES)}
    names = [m for n in options.suites.split(",") if n for m in groups.get(n, [n])]
    unknown = [n for n in names if n not in ALL_SUITES]
    if unknown:
        parser.error(f"unknown suite(s): {', '.join(unknown)} (known: {', '.join(ALL_SUITES)}, compat, all)")
    root = Path(options.keep) if options.keep else Path(tempfile.mkdtemp(prefix="rt-realsuites-"))
    all_same = True
    print(
        f"environment: {'a fresh one per suite (--env suite)' if options.env == 'suite' else 'this one (--env dev)'}",
        flush=True,
    )
    try:
        for name in names:
            if (root / name).exists():
                shutil.rmtree(root / name)
            (root / name).mkdir(parents=True)
            same, line = measure(
                name,
                root,
                options.repeat,
                bytecode=not options.no_bytecode,
                with_floor=options.floor,
                workers=options.parallel,
                where=options.env,
                warm=options.warm,
            )
            all_same = all_same and same
            print(line, flush=True)
    finally:
        if not options.keep:
            shutil.rmtree(root, ignore_errors=True)
    return 0 if all_same else 1


if __name__ == "__main__":
    raise SystemExit(main())
