"""The operating system's functions rt's own machinery uses while a test runs, bound when rt starts.

A test that fakes the file system replaces ``os``, ``io``, ``pathlib``, ``shutil`` and ``open`` in every
loaded module, and puts its fakes in ``sys.modules`` for what is imported meanwhile (pyfakefs's ``fs``
fixture, whose fakes know no real file or descriptor); another patches one function (``mock.patch(
"os.write")``). rt's output capture and its import hook (a module the test imports or reloads) must still
reach the real ones, as pytest's capture, which works on file objects of its own, and Python's import system,
which holds the ``posix`` module itself, do. The functions are attributes of a class: such tools swap what a
module's namespace holds, and never look into classes.
"""

from __future__ import annotations

import os


class RealOs:
    """``os`` functions as they were when rt started."""

    write = staticmethod(os.write)
    dup = staticmethod(os.dup)
    dup2 = staticmethod(os.dup2)
    lseek = staticmethod(os.lseek)
    pread = staticmethod(os.pread)
    ftruncate = staticmethod(os.ftruncate)
    open = staticmethod(os.open)
    close = staticmethod(os.close)
    getpid = staticmethod(os.getpid)
    stat = staticmethod(os.stat)
    mkdir = staticmethod(os.mkdir)
    replace = staticmethod(os.replace)
    unlink = staticmethod(os.unlink)
