"""onnxruntime refusals that depend on the processor the tests run on, not on the model.

onnxruntime's CPU build chooses some kernels by the instruction sets it finds at run time. The
4-bit blockwise GEMM behind ``com.microsoft.MatMulFpQ4``, for one, exists only where MLAS has an
AVX-512 path: elsewhere the node is refused with "4b quantization not yet supported on this
hardware platform", however valid it is. Such a refusal says nothing about an inference rule, so
a test that runs onnxruntime tells it apart (``hardware_refusal``), checks every case the machine
can run, and skips naming the cases it cannot (``skip_lacking``). Where the kernel exists the same
cases are checked as usual. docs/conformance.md lists the tests this concerns.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import pytest

# What onnxruntime says when the CPU, not the node, is missing something (lower case). A refusal
# for element types with no kernel ("NOT_IMPLEMENTED : Could not find an implementation") is not
# one: it is the same on every machine.
_MARKERS = re.compile(
    r"not (?:yet )?supported on this (?:hardware )?platform"
    r"|(?:requires|needs) (?:the )?(?:avx|avx2|avx-?512\w*|amx\w*|neon|sve|fma|f16c|sse4\.\d)\b"
    r"|instruction set (?:is )?not (?:supported|available)"
)


def hardware_refusal(message: str) -> bool:
    """Whether an onnxruntime error message is a refusal by the processor's missing features."""
    return _MARKERS.search(message.lower()) is not None


def skip_lacking(lacking: Sequence[str], total: int) -> None:
    """Skip the running test, naming the cases this machine's CPU cannot run, if there are any.

    Called after every other case was checked, so a skip never hides a failure of those."""
    if lacking:
        more = f" (and {len(lacking) - 1} more)" if len(lacking) > 1 else ""
        pytest.skip(f"{len(lacking)} of {total} cases need a kernel this CPU lacks: {lacking[0]}{more}")
