"""What every test process shares and sets up before the tests run.

The Python children the tests start (the command line, the examples, fresh interpreters for
imports, memory and signals; some hundred a run) each import onnx and the package. Where the
environment says not to write bytecode (``PYTHONDONTWRITEBYTECODE``), each of them would compile
every module it imports from its source again, some 0.3 s of CPU each. For the run's children
that bytecode goes to a temporary directory instead, never beside the sources
(``PYTHONPYCACHEPREFIX``): the first child to import a module compiles it, the others read it.
What the children run is the same; the test processes themselves are left as they are.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from collections.abc import Iterator

import pytest

# Tests that press Ctrl-C on a child (the CLI's start, verify, annotate) need the child to start
# with SIGINT at its default, as in a terminal. A shell that starts the suite in the background
# without job control hands it SIGINT ignored, which a child would inherit (and then rightly keep:
# infer.start leaves an ignored SIGINT ignored). A handler set here is reset to the default in
# every child at exec.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session", autouse=True)
def _children_keep_their_bytecode() -> Iterator[None]:
    if not os.environ.get("PYTHONDONTWRITEBYTECODE") or os.environ.get("PYTHONPYCACHEPREFIX"):
        yield
        return
    prefix = tempfile.mkdtemp(prefix="onnx-infer-tests-bytecode-")
    saved = os.environ.pop("PYTHONDONTWRITEBYTECODE")
    os.environ["PYTHONPYCACHEPREFIX"] = prefix
    try:
        yield
    finally:
        os.environ["PYTHONDONTWRITEBYTECODE"] = saved
        os.environ.pop("PYTHONPYCACHEPREFIX", None)
        shutil.rmtree(prefix, ignore_errors=True)
