"""``python -m tests.oracle``: the campaign (see ``tests.oracle.campaign``)."""

import sys

from .campaign import main

sys.exit(main())
