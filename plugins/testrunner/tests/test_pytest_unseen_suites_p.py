"""``rt test`` on mechanisms found while running unseen projects' suites from their PyPI sdists (issue 15,
session 14, sweep P: serialization, dates and times, text and parsing, data validation and data-structure
libraries): each test names the suite that showed it, runs pytest itself on the same small project and
compares the outcome counts, so a difference in either runner shows."""

from __future__ import annotations

from pathlib import Path

from rt.testing import same_counts_as_pytest, write_files


def test_a_scoped_parametrize_groups_by_value_and_remakes_its_fixtures(tmp_path: Path) -> None:
    """icalendar 7.3.2: its conftest.py's ``pytest_generate_tests`` gives ``tzp_name`` the values ``["pytz",
    "zoneinfo"]``, or ``["pytz"]`` for a test that asks for ``pytz_only``, with ``scope="module"``, and a
    module-scoped ``tzp`` fixture is built from it. rt ignored the call's ``scope`` and compared the
    parameters a wider fixture is built from by index: ``tzp`` made for "zoneinfo" (index 0 of one call) was
    kept for "pytz" (index 0 of the other), 595 set-up errors where pytest has none. pytest makes a
    pseudo-fixture of that scope for the name: the tests sharing a value run together (by value), and a
    fixture built from it is made again when the value changes. The same with ``@pytest.mark.parametrize(...,
    scope="module")``. pytest 9.2: 14 passed."""
    write_files(
        tmp_path,
        {
            "conftest.py": """
                import pytest

                SETUPS = []


                @pytest.fixture(scope="module")
                def provider(name):
                    SETUPS.append(name)
                    yield name
                    SETUPS.append(f"-{name}")


                @pytest.fixture
                def only_b(provider, name):
                    assert provider == "b", provider
                    return name


                def pytest_generate_tests(metafunc):
                    if "name" in metafunc.fixturenames:
                        names = ["b"] if "only_b" in metafunc.fixturenames else ["a", "b"]
                        metafunc.parametrize("name", names, scope="module")
            """,
            "test_generated.py": """
                import pytest

                from conftest import SETUPS


                @pytest.mark.parametrize("i", [1, 2])
                def test_any(i, provider, name):
                    assert provider == name


                @pytest.mark.parametrize("i", [1, 2])
                def test_b_only(i, only_b, provider):
                    assert provider == "b"


                def test_again(provider, name):
                    assert provider == name


                def test_setups_grouped_by_value():
                    assert SETUPS == ["a", "-a", "b"], SETUPS
            """,
            "test_marked.py": """
                import pytest

                MADE = []


                @pytest.fixture(scope="module")
                def server(port):
                    MADE.append(port)
                    return f"server:{port}"


                @pytest.mark.parametrize("port", [1, 2], scope="module")
                def test_first(server, port):
                    assert server == f"server:{port}"


                @pytest.mark.parametrize("port", [2, 1], scope="module")
                def test_second(server, port):
                    assert server == f"server:{port}"


                def test_made_once_per_port():
                    assert MADE == [1, 2], MADE
            """,
        },
    )
    pytest_run, _ = same_counts_as_pytest(tmp_path)
    assert "14 passed" in pytest_run.output, pytest_run.output


def test_a_fixture_returning_a_generator_has_the_generator_for_its_value(tmp_path: Path) -> None:
    """frozendict 2.5.1: its class's ``generator_seq2`` fixture returns ``(x for x in seq2)``, which its tests
    pass to ``frozendict(...)``. rt took any generator a fixture gave for a ``yield`` fixture: its first item
    was the value and the rest "yielded more than once" at teardown (4 failed, 4 errors). pytest tells a
    ``yield`` fixture by its function (a generator function), not by what it returns. pytest 9.2: 4
    passed."""
    write_files(
        tmp_path,
        {
            "test_generators.py": """
                import pytest


                @pytest.fixture
                def pairs():
                    return (x for x in [("a", 1), ("b", 2)])


                @pytest.fixture
                def yielded():
                    yield (x for x in [1, 2, 3])


                def test_returned(pairs):
                    assert dict(pairs) == {"a": 1, "b": 2}


                def test_yielded_generator(yielded):
                    assert list(yielded) == [1, 2, 3]


                class TestInClass:
                    @pytest.fixture
                    def seq(self):
                        return (n * 2 for n in range(3))

                    def test_method_fixture(self, seq):
                        assert tuple(seq) == (0, 2, 4)

                    def test_again(self, seq):
                        assert next(seq) == 0
            """,
        },
    )
    pytest_run, _ = same_counts_as_pytest(tmp_path)
    assert "4 passed" in pytest_run.output, pytest_run.output
