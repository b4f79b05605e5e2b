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
