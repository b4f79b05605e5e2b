"""The JUnit report (REFERENCE.md "JUnit") over fixture projects that pass, fail, skip, time out, retry, raise
in hooks, and a pytest-style file; every report is validated against the JUnit XSD in tests/data."""

from __future__ import annotations

import socket
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema

from rt.testing import run_cli, run_pytest, write_files

FIXTURES = Path(__file__).parent / "fixtures"
SCHEMA = xmlschema.XMLSchema(Path(__file__).parent / "data" / "junit.xsd")


def junit(project: Path, tmp_path: Path, *args: str) -> ET.Element:
    out = tmp_path / "report.xml"
    result = run_cli("test", "--reporter=junit", "--reporter-outfile", str(out), *args, cwd=project)
    assert result.code == 1, result.stderr
    assert "(pass) passes" in result.stderr  # the console output is still written
    SCHEMA.validate(str(out))
    return ET.parse(out).getroot()


def child_names(suite: ET.Element) -> list[str]:
    return [f"{child.tag}:{child.get('name')}" for child in suite if child.tag in ("testsuite", "testcase")]


@pytest.mark.parametrize("order", [[], ["--seed", "7"], ["--seed", "12345"], ["--concurrent"]])
def test_structure_in_source_order_whatever_the_run_order(tmp_path: Path, order: list[str]) -> None:
    root = junit(FIXTURES / "outcomes", tmp_path, *order)
    assert root.tag == "testsuites" and root.get("name") == "rt test"
    assert (root.get("tests"), root.get("failures"), root.get("errors"), root.get("skipped")) == (
        "13",
        "7",
        "0",
        "2",
    )
    files = {suite.get("name"): suite for suite in root.findall("testsuite")}
    assert set(files) == {"outcomes.test.py", "hooks.test.py", "plain_test.py"}
    outcomes = files["outcomes.test.py"]
    assert child_names(outcomes) == [
        "testcase:passes",
        "testcase:fails",
        "testcase:is skipped",
        "testcase:is todo",
        "testsuite:outer",
        "testcase:times out",
        "testcase:flaky",
        "testcase:always fails",
    ]
    outer = outcomes.find("testsuite[@name='outer']")
    assert outer is not None
    assert child_names(outer) == ["testcase:nested pass", "testsuite:inner"]
    for suite in root.iter("testsuite"):
        assert suite.get("hostname") == socket.gethostname()
        assert suite.get("file") in files
    assert (outer.get("file"), outer.get("line"), outer.get("tests"), outer.get("failures")) == (
        "outcomes.test.py",
        "10",
        "2",
        "1",
    )
    inner = outer.find("testsuite[@name='inner']")
    assert inner is not None and inner.get("line") == "13"  # where each describe is declared
    hooks = files["hooks.test.py"]
    assert [(suite.get("name"), suite.get("line")) for suite in hooks.findall("testsuite")] == [
        ("setup breaks", "3"),
        ("teardown breaks", "11"),
    ]


def test_results_messages_and_retries(tmp_path: Path) -> None:
    root = junit(FIXTURES / "outcomes", tmp_path)
    cases = {case.get("name"): case for case in root.iter("testcase")}
    assert len([c for c in root.iter("testcase") if c.get("name") == "flaky"]) == 1  # once, its last result
    assert list(cases["flaky"]) == [] and cases["flaky"].get("assertions") == "1"
    passes = cases["passes"]
    assert (passes.get("classname"), passes.get("file"), passes.get("line")) == (
        "outcomes.test.py",
        "outcomes.test.py",
        "5",
    )
    assert cases["deep fail"].get("classname") == "outer > inner"
    skipped = cases["is skipped"].find("skipped")
    assert skipped is not None and skipped.get("message") is None
    todo = cases["is todo"].find("skipped")
    assert todo is not None and todo.get("message") == "TODO"
    # the whole failure message (every line of the diff), the traceback in the text
    failure = cases["fails"].find("failure")
    assert failure is not None and failure.get("type") == "ExpectationError"
    assert (
        failure.get("message")
        == "expect(received).to_equal({'a': 2})\n\n- Expected\n+ Received\n\n- {'a': 2}\n+ {'a': 1}"
    )
    assert failure.text is not None and "at outcomes.test.py:6" in failure.text
    retried = cases["always fails"].find("failure")
    assert retried is not None and retried.get("message") == "ValueError: broken\nsecond line"
    assert retried.text is not None and "(attempt 2: the last of 2 attempts)" in retried.text
    timeout = cases["times out"].find("failure")
    assert timeout is not None and (timeout.get("type"), timeout.get("message")) == (
        "Timeout",
        "this test timed out after 100ms.",
    )
    # hooks that raise
    hook = cases["before_all hook"].find("failure")
    assert hook is not None and hook.get("message") == "RuntimeError: database down"
    after = cases["body passes"].find("failure")
    assert after is not None and after.get("message") == "OSError: cleanup failed"
    # the pytest-style file: bare asserts, their explanation in the message, after the type's name as
    # pytest's (its repr begins ``AssertionError("assert {'k'``, which pytest does not shorten)
    bad = cases["test_bad"].find("failure")
    assert bad is not None and bad.get("type") == "AssertionError"
    assert (bad.get("message") or "").startswith(
        "AssertionError: assert {'k': 1} == {'k': 2}\n  \n  Differing items:"
    )


def test_an_asserts_message_is_pytests_for_a_pytest_test_and_rts_own_for_an_rt_test(tmp_path: Path) -> None:
    """The same ``assert 1 == 2, "plain"`` in a pytest test and in a test of rt's own API: the pytest test's
    ``message`` is pytest 9.2 junitxml's (``AssertionError: plain`` and the explanation), rt's own test keeps
    rt's (``plain`` and the explanation, no type name), as before pytest's wording was adopted (a regression
    of it gave rt's own tests pytest's words too)."""
    body = 'assert 1 == 2, "plain"\n'
    write_files(
        tmp_path,
        {
            "own.test.py": f'from rt.test import test\n\n@test("own")\ndef _():\n    {body}',
            "test_py.py": f"def test_py():\n    {body}",
        },
    )
    pytest_run = run_pytest("-p", "no:randomly", "--junitxml=p.xml", cwd=tmp_path)
    assert pytest_run.code == 1, pytest_run.output
    result = run_cli("test", "--reporter=junit", "--reporter-outfile=r.xml", cwd=tmp_path)
    assert result.code == 1, result.output

    def messages(report: str) -> dict[str | None, str | None]:
        cases = ET.parse(tmp_path / report).getroot().iter("testcase")
        return {
            case.get("name"): getattr(case.find("failure"), "attrib", {}).get("message") for case in cases
        }

    expected = messages("p.xml")["test_py"]
    assert expected is not None and expected.startswith("AssertionError: plain\n"), expected
    assert messages("r.xml") == {"test_py": expected, "own": "plain\nassert 1 == 2"}


def test_file_that_fails_to_load_is_an_error_not_a_test(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (project / "ok.test.py").write_text("from rt.test import test\ntest('passes', lambda: None)\n")
    (project / "broken.test.py").write_text("import nowhere_to_be_found\n")
    root = junit(project, tmp_path)
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("2", "0", "1")
    broken = root.find("testsuite[@name='broken.test.py']")
    assert broken is not None
    error = broken.find("testcase/error")
    assert error is not None and error.get("type") == "ModuleNotFoundError"
    assert "nowhere_to_be_found" in (error.get("message") or "")


def test_schema_rejects_what_consumers_cannot_read(tmp_path: Path) -> None:
    """The XSD is a real check: a report with a non-numeric count or two results in a test case fails it."""
    bad_count = '<testsuites><testsuite name="f" tests="x" failures="0"/></testsuites>'
    two_results = (
        '<testsuites><testsuite name="f" tests="1" failures="1"><testcase name="t" classname="c" '
        'time="0"><failure/><skipped/></testcase></testsuite></testsuites>'
    )
    for text in (bad_count, two_results):
        assert not SCHEMA.is_valid(text)


def test_pytest_outcomes(tmp_path: Path) -> None:
    """A pytest suite: a set-up error is <error>, xfail a <skipped type="pytest.xfail">, the skip reason kept,
    captured output in <system-out>."""
    out = tmp_path / "report.xml"
    result = run_cli(
        "test", "--reporter=junit", "--reporter-outfile", str(out), cwd=FIXTURES / "pytest_style"
    )
    assert result.code == 1, result.stderr
    SCHEMA.validate(str(out))
    root = ET.parse(out).getroot()
    assert (root.get("tests"), root.get("failures"), root.get("errors"), root.get("skipped")) == (
        "7",
        "1",
        "1",
        "2",
    )
    cases = {case.get("name"): case for case in root.iter("testcase")}
    assert list(cases["test_positive[2]"]) == []
    skipped = cases["test_skipped"].find("skipped")
    assert skipped is not None and skipped.get("message") == "not on this platform"
    xfail = cases["test_known_bug"].find("skipped")
    assert xfail is not None and (xfail.get("type"), xfail.get("message")) == ("pytest.xfail", "known bug")
    error = cases["test_uses_broken"].find("error")
    assert error is not None and error.get("type") == "RuntimeError"
    assert "fixture could not start" in (error.get("message") or "")
    output = cases["test_prints_then_fails"].find("system-out")
    assert output is not None and "some output" in (output.text or "")
