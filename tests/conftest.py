"""What every test process sets up before the tests run."""

from __future__ import annotations

import signal

# Tests that press Ctrl-C on a child (the CLI's start, verify, annotate) need the child to start
# with SIGINT at its default, as in a terminal. A shell that starts the suite in the background
# without job control hands it SIGINT ignored, which a child would inherit (and then rightly keep:
# infer.start leaves an ignored SIGINT ignored). A handler set here is reset to the default in
# every child at exec.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
