"""Protobuf's wire format where onnx-infer reads or writes bytes itself: varints.

The loader, the UTF-8 checks and ``annotate`` splice serialized messages without parsing them
(a model's weights are never copied); this is the one encoder and the one decoder of the
variable-length integers that delimit fields there.
"""

from __future__ import annotations


def varint(n: int) -> bytes:
    """``n`` (>= 0) as a protobuf varint."""
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def read_varint(data: bytes, i: int) -> tuple[int, int]:
    """The varint at ``data[i]``, and the index after it (``IndexError`` past the end)."""
    b = data[i]
    return (b, i + 1) if b < 0x80 else read_varint_from(data, i + 1, b)


def read_varint_from(data: bytes, i: int, first: int) -> tuple[int, int]:
    """The varint whose first byte ``first`` (> 0x7F) was read, and the index after it."""
    result, shift = first & 0x7F, 7
    while True:
        b = data[i]
        i += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, i
        shift += 7
