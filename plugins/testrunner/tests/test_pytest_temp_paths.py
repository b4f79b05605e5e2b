"""``tmp_path``, ``tmp_path_factory`` and ``tmpdir`` under ``rt test`` as under pytest 9.2: the paths the tests
see, what is left on disk after several runs, ``--basetemp``, the retention ini options and the
``--parallel`` workers' folders (issue 15, session 14). typer 0.29.2 showed it: three tests look for words
in rich's 80-column error box holding the test's ``tmp_path``, and rt's shorter ``/tmp/rt-test-XXXXXXXX/``
paths moved rich's line breaks into those words.

Each runner gets a temporary root of its own (``PYTEST_DEBUG_TEMPROOT``), so the two layouts can be
compared entry by entry."""

from __future__ import annotations

from pathlib import Path

from rt.testing import run_cli, run_pytest, write_files

#: each test writes what it sees, relative to the temporary root, into ``seen.txt`` of the project
_SUITE = {
    "conftest.py": """
    import os
    from pathlib import Path

    import pytest


    @pytest.fixture
    def seen(request):
        root = Path(os.environ["PYTEST_DEBUG_TEMPROOT"]).resolve()
        lines = []

        def see(path):
            shown = path if path.startswith("listed") else Path(path).relative_to(root)
            lines.append(f"{request.node.name}: {shown}")

        yield see
        with open(Path(__file__).parent / "seen.txt", "a", encoding="utf-8") as out:
            out.writelines(f"{line}\\n" for line in lines)
    """,
    "test_folders.py": """
    import pytest


    def test_tmp_path(tmp_path, tmp_path_factory, seen):
        seen(str(tmp_path))
        seen(str(tmp_path_factory.getbasetemp()))
        assert tmp_path.parent == tmp_path_factory.getbasetemp()


    @pytest.mark.parametrize("value", ["a" * 40, "b/c"])
    def test_a_name_longer_than_thirty_characters(tmp_path, value, seen):
        seen(str(tmp_path))


    def test_factory(tmp_path_factory, tmpdir, tmpdir_factory, seen):
        seen(str(tmp_path_factory.mktemp("data")))
        seen(str(tmp_path_factory.mktemp("data")))
        seen(str(tmp_path_factory.mktemp("plain", numbered=False)))
        seen(str(tmpdir))
        seen(str(tmpdir_factory.mktemp("legacy")))
        with pytest.raises(ValueError, match="is not a normalized and relative path"):
            tmp_path_factory.mktemp("../outside")
        entries = sorted(p.name for p in tmp_path_factory.getbasetemp().iterdir())
        seen("listed " + " ".join(entries))
    """,
}


def _listing(root: Path) -> list[str]:
    """Every entry under ``root``, relative, with where each link points (relative too)."""
    found = []
    for path in sorted(root.rglob("*")):
        entry = str(path.relative_to(root))
        if path.is_symlink():
            entry += f" -> {path.resolve().relative_to(root.resolve())}"
        found.append(entry)
    return found


def _depth(entry: str) -> int:
    return entry.split(" -> ")[0].count("/")


def _both(
    project: Path, tmp: Path, *args: str, runs: int = 1, code: int = 0
) -> dict[str, tuple[list[str], list[str]]]:
    """Run pytest and ``rt test`` ``runs`` times each, each with a temporary root of its own: what the
    tests saw (``seen.txt``, in order) and what is left in that root, by runner."""
    found = {}
    for runner in ("pytest", "rt"):
        root = tmp / f"root-{runner}"
        root.mkdir()
        (project / "seen.txt").unlink(missing_ok=True)
        for _ in range(runs):
            env = {"PYTEST_DEBUG_TEMPROOT": str(root)}
            if runner == "pytest":
                result = run_pytest("-p", "no:randomly", *args, cwd=project, env=env)
            else:
                result = run_cli("test", *args, cwd=project, env=env)
            assert result.code == code, result.output
        seen = (project / "seen.txt").read_text(encoding="utf-8").splitlines()
        found[runner] = (seen, _listing(root))
    return found


def test_the_tests_see_pytests_folders_and_four_runs_leave_pytests_last_three(tmp_path: Path) -> None:
    """``{temproot}/pytest-of-{user}/pytest-{N}/{name, 30 characters}{n}``, ``mktemp`` numbered per name
    (``data0``, ``data1``) or not, each name's ``{name}current`` link, a ``pytest-current`` link, the
    ``.lock`` of the running session, and after four runs the last three numbered folders (pytest's
    ``tmp_path_retention_count`` default). rt gave ``/tmp/rt-test-XXXXXXXX/`` and kept every run's."""
    project = write_files(tmp_path / "project", _SUITE)
    found = _both(project, tmp_path, runs=4)
    seen, left = found["rt"]
    assert found["pytest"] == (seen, left)
    assert "test_tmp_path: pytest-of-" in seen[0]
    assert any(line.endswith("/pytest-3/test_a_name_longer_than_thirty0") for line in seen), seen
    assert [entry for entry in left if _depth(entry) == 1] == [
        f"{left[0]}/pytest-1",
        f"{left[0]}/pytest-2",
        f"{left[0]}/pytest-3",
        f"{left[0]}/pytest-current -> {left[0]}/pytest-3",
    ], left


def test_basetemp_is_emptied_and_used_as_it_is(tmp_path: Path) -> None:
    """``--basetemp DIR``: the tests' folders go straight into it, what an earlier run left there is
    removed first, and nothing is numbered or cleaned up after the run. rt ignored the option."""
    project = write_files(tmp_path / "project", _SUITE)
    left_over = tmp_path / "base" / "left-over"
    for runner in ("pytest", "rt"):
        left_over.mkdir(parents=True)
        (project / "seen.txt").unlink(missing_ok=True)
        args = ("--basetemp", str(tmp_path / "base"))
        env = {
            "PYTEST_DEBUG_TEMPROOT": str(tmp_path)
        }  # not used with --basetemp: what the paths are shown from
        if runner == "pytest":
            result = run_pytest("-p", "no:randomly", *args, cwd=project, env=env)
        else:
            result = run_cli("test", *args, cwd=project, env=env)
        assert result.code == 0, result.output
        assert not left_over.exists()
        listed = [
            line
            for line in (project / "seen.txt").read_text(encoding="utf-8").splitlines()
            if "listed" in line
        ]
        if runner == "pytest":
            expected = (listed, _listing(tmp_path / "base"))
        else:
            assert (listed, _listing(tmp_path / "base")) == expected
    assert "data0 data1 datacurrent legacy0 legacycurrent plain" in expected[0][0]


def test_retention_options_keep_what_pytest_keeps(tmp_path: Path) -> None:
    """``tmp_path_retention_count = 1`` keeps the last run only; ``tmp_path_retention_policy = "none"``
    removes the run's own folder at its end (pytest's ini options, read by rt since session 14)."""
    for name, setting in (
        ("count", "tmp_path_retention_count = 1"),
        ("none", "tmp_path_retention_policy = none"),
    ):
        project = write_files(tmp_path / name / "project", {**_SUITE, "pytest.ini": f"[pytest]\n{setting}\n"})
        found = _both(project, tmp_path / name, runs=2)
        assert found["pytest"] == found["rt"], setting
        left = found["rt"][1]
        user = left[0]
        expected = (
            [user, f"{user}/pytest-1", f"{user}/pytest-current -> {user}/pytest-1"]
            if name == "count"
            else [user]
        )
        assert [entry for entry in left if _depth(entry) <= 1] == expected, left


def test_the_failed_retention_policy_keeps_the_folders_of_the_tests_that_did_not_pass(tmp_path: Path) -> None:
    """``tmp_path_retention_policy = failed``: a test's ``tmp_path`` is removed at its teardown when its call
    passed (or it had none), kept when it failed or skipped in its body; the run failed, so the base folder
    stays. rt kept every test's folder."""
    files = {
        **_SUITE,
        "pytest.ini": "[pytest]\ntmp_path_retention_policy = failed\n",
        "test_outcomes.py": """
        import pytest


        def test_fails(tmp_path, seen):
            seen(str(tmp_path))
            assert 0


        def test_skips(tmp_path, seen):
            pytest.skip("kept")


        @pytest.mark.xfail
        def test_xfails(tmp_path):
            assert 0
        """,
    }
    project = write_files(tmp_path / "project", files)
    found = _both(project, tmp_path, code=1)
    assert found["pytest"] == found["rt"]
    left = [entry.split("/", 2)[2] for entry in found["rt"][1] if _depth(entry) == 2]
    assert [name for name in left if "->" not in name] == [
        *("data0", "data1", "legacy0", "plain"),  # mktemp's, which the policy leaves
        *("test_fails0", "test_skips0", "test_xfails0"),
    ], left


def test_parallel_workers_get_popen_gw_folders_in_one_run_folder(tmp_path: Path) -> None:
    """``--parallel=2``: the main process takes one numbered run folder (or ``--basetemp``'s, emptied) and
    each worker's ``tmp_path_factory.getbasetemp()`` is ``popen-gw0``, ``popen-gw1`` in it, as pytest-xdist
    3.8.0's ``-n 2`` gives them (its controller passes each worker ``--basetemp={run folder}/popen-gw{N}``),
    also when a conftest.py's ``pytest_configure`` asked for it in the zygote the workers are forked from."""
    files = dict(_SUITE)
    files["conftest.py"] += """

    def pytest_configure(config):
        config.early_base = config._tmp_path_factory.getbasetemp()
    """
    for name in ("one", "two", "three"):
        files[f"test_{name}.py"] = f"""
        import os
        import time


        def test_{name}(tmp_path, seen, pytestconfig):
            time.sleep(0.5)  # each worker is still busy with its file when the other starts
            assert tmp_path.parent == pytestconfig._tmp_path_factory.getbasetemp()
            seen(str(tmp_path) + " " + os.environ["RT_TEST_WORKER"])
        """
    project = write_files(tmp_path / "project", files)
    root = tmp_path / "root"
    root.mkdir()
    for args, folder in (((), ["pytest-of-", "pytest-0"]), (("--basetemp", str(root / "given")), ["given"])):
        (project / "seen.txt").unlink(missing_ok=True)
        result = run_cli("test", "--parallel=2", *args, cwd=project, env={"PYTEST_DEBUG_TEMPROOT": str(root)})
        assert result.code == 0, result.output
        seen = (project / "seen.txt").read_text(encoding="utf-8").splitlines()
        workers = set()
        for line in seen:
            if line.split(":")[0] in ("test_one", "test_two", "test_three"):
                path, worker = line.split(": ", 1)[1].split()
                parts = path.split("/")
                shown = [parts[0][: len(folder[0])], *parts[1 : len(folder)]]
                assert shown == folder, seen
                assert parts[len(folder)] == f"popen-gw{int(worker) - 1}", seen
                workers.add(parts[len(folder)])
        assert "popen-gw0" in workers, seen
    assert not list(root.glob("*/pytest-0/.lock"))


def test_a_bad_retention_value_stops_the_run_before_any_test_as_pytest(tmp_path: Path) -> None:
    """pytest's tmpdir plugin reads ``tmp_path_retention_count`` and ``tmp_path_retention_policy`` when it is
    configured, whether a test asks for a folder or not: a count ``int()`` cannot read or below 0 is its
    internal error (status 3), a policy other than all/failed/none its usage error naming the configuration
    file (status 4); no test runs. rt ran the tests and failed those asking for a folder at their set-up
    (1 passed, 1 error, status 1). Now the same statuses, no test run, the reason in one line."""
    suite = {"test_x.py": "def test_folder(tmp_path):\n    pass\n\n\ndef test_plain():\n    pass\n"}
    cases = [
        ("tmp_path_retention_count = -1", 3, "tmp_path_retention_count must be >= 0. Current input: -1."),
        ("tmp_path_retention_count = many", 3, "invalid literal for int() with base 10: 'many'"),
        (
            "tmp_path_retention_policy = kept",
            4,
            "pytest.ini: config option 'tmp_path_retention_policy' expects one of 'all' | 'failed' | 'none',"
            " got 'kept'",
        ),
    ]
    for setting, status, words in cases:
        root = tmp_path / setting.partition(" ")[0].rpartition("_")[2]
        write_files(root, {**suite, "pytest.ini": f"[pytest]\n{setting}\n"})
        by_pytest = run_pytest("-p", "no:randomly", cwd=root, timeout=120)
        assert by_pytest.code == status, by_pytest.output
        assert words in by_pytest.output
        by_rt = run_cli("test", "-p", "no:randomly", cwd=root, timeout=120)
        assert by_rt.code == status, by_rt.output
        (line,) = by_rt.stderr.strip().splitlines()
        assert words in line
        assert "passed" not in by_rt.output and "pass" not in by_rt.stdout
