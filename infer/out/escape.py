"""Text from a model or a user, made safe to show: the one escaping of names for people to read.

A model's names (values, nodes, graphs, domains, ``dim_param``\\ s, doc strings) and the paths and
options a user gives are arbitrary text. Written raw to a terminal, a control character is a
command to it: ESC and CSI sequences erase lines and conceal text, OSC sequences set the window
title or write the clipboard (OSC 52), and a bidi override makes ``exe.txt`` read as
``txt.exe``. Every verb's terminal text and the HTML report pass such text through ``escaped``,
which writes each of those characters visibly as a Python escape (ESC as ``\\x1b``, RIGHT-TO-LEFT
OVERRIDE as ``\\u202e``) and leaves every other character as it is. ``--json`` keeps names exact:
``json.dumps`` writes them ASCII-only, a control character as ``\\u001b``, so they round-trip.
"""

from __future__ import annotations

import re

# C0 controls (newline and tab included: a name must not break or align a line), DEL, C1 controls
# (0x9b is a one-byte CSI), and the bidi controls: LRM, RLM, the Arabic letter mark, the embeddings
# and overrides (U+202A-202E) and the isolates (U+2066-2069).
UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escaped(text: str) -> str:
    """``text`` with every control character and bidi control written as an escape (``\\x1b``,
    ``\\u202e``); text without one is returned as it is."""
    if UNSAFE.search(text) is None:  # the common case: one scan, no copy
        return text
    return UNSAFE.sub(_escape, text)
