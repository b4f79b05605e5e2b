"""`import rt` is cheap: it imports no plugin, not pluggy, not anyio."""

from __future__ import annotations


def test_import_rt_loads_no_plugin_and_no_dependency(run_python):
    result = run_python(
        "import sys, time\n"
        "start = time.perf_counter(); import rt; took = time.perf_counter() - start\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'pluggy', 'anyio', 'attrs', 'typing'} or m.startswith('rt_') or (m.startswith('rt.') ))\n"
        "print(loaded); print(f'{took*1000:.2f} ms', file=sys.stderr)\n"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_first_namespace_access_loads_plugins_then(run_python):
    result = run_python(
        "import sys, rt\nprint(hasattr(rt, 'no_such_name'))\nprint('pluggy' in sys.modules)\n"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "True"]
