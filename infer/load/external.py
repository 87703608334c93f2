"""External data (Clauses 13 and 15.3): checking references, and reading one safely.

Inference needs types, not weights, so external data is read only when the caller opts in
(``infer_model(..., read_external_data=True)``, Clause 15.5) and then only for small integer
initializers, whose contents can be shapes. ``reference_problems`` checks a reference without
touching the file system (every model gets it); ``read`` opens and reads one reference after
every check Clause 15.3 asks for:

1. the location is relative, has no parent-directory component and no key outside Table 11;
2. the path is walked one component at a time from the model directory, each opened relative
   to the previous one with ``O_NOFOLLOW`` (an ``openat`` walk), after ``lstat`` showed it is a
   directory, not a symbolic link, and the opened directory is checked to be the one examined;
3. the file is a regular file, not a symbolic link, with exactly one hard link, and the file
   opened (``O_NOFOLLOW | O_NONBLOCK``) is the one examined (``fstat`` device and inode against
   the ``lstat``): a path that names another file by the time it is opened is refused;
4. the canonical path resolves inside the model directory (a second, independent layer);
5. the declared offset and length lie within the file (checked on the open file) and the length
   is what the tensor's dims and element type need, before anything is allocated;
6. a checksum, when present, is the SHA-1 of the whole file, read through the same descriptor;
   each file is hashed once per run, and hashing stops at a byte budget (``Digests``): a
   reference past it is left unread, with a warning rather than an error.

Any failure is an ``ExternalDataError`` with a one-line reason, which the engine reports as an
``external-data`` error (a validation failure, Clause 15.3), except a spent hashing budget
(``HashBudgetSpent``), a limit of ours reported as a warning; the tensor's contents stay unknown.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from onnx import AttributeProto, GraphProto, ModelProto, TensorProto

from infer.core.diagnostics import ERROR, INFO, WARNING
from infer.core.limits import MAX_EXTERNAL_HASH_BYTES, MAX_KNOWN_ELEMENTS
from infer.core.types import elem_bits, elem_name

KEYS = ("location", "offset", "length", "checksum")  # Table 11
READABLE = {TensorProto.INT64: 8, TensorProto.INT32: 4}  # integer initializers that can be shapes


class ExternalDataError(Exception):
    """A reference that cannot be followed safely; the message is one line."""


@dataclass(frozen=True)
class Reference:
    location: str
    offset: int
    length: int | None
    checksum: str | None


def is_external(t: TensorProto) -> bool:
    return t.data_location == TensorProto.EXTERNAL


def _components(location: str) -> list[str]:
    # A backslash is a separator for the checks too: a model written on Windows uses it.
    return [c for c in location.replace("\\", "/").split("/") if c not in ("", ".")]


def parse_reference(t: TensorProto) -> Reference:
    """The reference of an external tensor, checked without touching the file system."""
    entries: dict[str, str] = {}
    for e in t.external_data:
        if e.key not in KEYS:
            raise ExternalDataError(f"key {e.key!r} is not one of {', '.join(KEYS)} (Clause 13.2)")
        if e.key in entries:
            raise ExternalDataError(f"key {e.key!r} is given twice")
        entries[e.key] = e.value
    location = entries.get("location", "")
    if not location:
        raise ExternalDataError("the reference has no location (Clause 13.2)")
    if "\0" in location:
        raise ExternalDataError("the location contains a NUL character")
    if (
        location.startswith(("/", "\\"))
        or PurePosixPath(location).is_absolute()
        or (len(location) > 1 and location[1] == ":")
    ):
        raise ExternalDataError(f"location {location!r} is an absolute path (Clause 13.2)")
    parts = _components(location)
    if ".." in parts:
        raise ExternalDataError(f"location {location!r} has a parent-directory component (Clause 13.2)")
    if not parts:
        raise ExternalDataError(f"location {location!r} names no file")
    if location.replace("\\", "/").rpartition("/")[2] in ("", "."):
        # A trailing separator (or `/.`) names a directory: `w.bin/` is not the file `w.bin`.
        raise ExternalDataError(f"location {location!r} ends in a path separator: it names a directory, not a file")

    def number(key: str) -> int | None:
        text = entries.get(key)
        if text is None:
            return None
        if not text.isascii() or not text.isdigit() or len(text) > 20:
            raise ExternalDataError(f"{key} {text!r} is not a non-negative integer")
        return int(text)

    checksum = entries.get("checksum")
    if checksum is not None and (len(checksum) != 40 or any(c not in "0123456789abcdefABCDEF" for c in checksum)):
        raise ExternalDataError(f"checksum {checksum[:60]!r} is not a SHA-1 digest in hexadecimal (Clause 13.3)")
    return Reference(location, number("offset") or 0, number("length"), checksum)


def reference_problems(t: TensorProto) -> list[str]:
    """What is wrong with an external tensor's reference, found without any I/O (Clause 13)."""
    problems = []
    try:
        parse_reference(t)
    except ExternalDataError as e:
        problems.append(str(e))
    if t.raw_data or any(
        len(getattr(t, f)) for f in ("float_data", "int32_data", "int64_data", "double_data", "uint64_data")
    ):
        problems.append("its data location is external, yet it carries contents in the model too (Clause 13.1)")
    return problems


def wanted(t: TensorProto) -> bool:
    """Whether inference would use this tensor's contents: a small integer tensor."""
    if t.data_type not in READABLE or any(d < 0 for d in t.dims):
        return False
    count = 1
    for d in t.dims:
        count *= d
        if count > MAX_KNOWN_ELEMENTS:
            return False
    return True


def expected_bytes(t: TensorProto) -> int:
    """Bytes the tensor's dims and element type need stored raw (packed types rounded up)."""
    bits = elem_bits(t.data_type)
    if bits is None:
        raise ExternalDataError(f"element type {elem_name(t.data_type)} has no raw form to read (Clause 13.1)")
    if any(d < 0 for d in t.dims):
        raise ExternalDataError(f"dims {list(t.dims)} are negative")
    count = 1
    for d in t.dims:
        count *= d
    return (count * bits + 7) // 8


# Decided once, at import: a file can be opened relative to a directory without following links.
SAFE_OPEN = (
    hasattr(os, "O_NOFOLLOW")
    and hasattr(os, "O_DIRECTORY")
    and os.open in os.supports_dir_fd
    and os.stat in os.supports_dir_fd
    and hasattr(os, "pread")
)


def _examine(name: str, parent: int, shown: str) -> os.stat_result:
    """``name`` under ``parent``, examined without following it; a symbolic link is refused."""
    try:
        st = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except OSError as e:
        raise ExternalDataError(f"{shown}: {e.strerror or e}") from None
    if stat.S_ISLNK(st.st_mode):
        raise ExternalDataError(f"{shown} is a symbolic link (Clause 15.3)")
    return st


def _open_directory(name: str, parent: int, shown: str) -> int:
    """Open directory ``name`` under ``parent`` if it is a real directory (not a link)."""
    st = _examine(name, parent, shown)
    if not stat.S_ISDIR(st.st_mode):
        raise ExternalDataError(f"{shown} is not a directory")
    try:
        fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
    except OSError as e:
        raise ExternalDataError(f"{shown}: cannot open ({e.strerror or e}); was it replaced by a link?") from None
    opened = os.fstat(fd)
    if (opened.st_dev, opened.st_ino) != (st.st_dev, st.st_ino):
        os.close(fd)
        raise ExternalDataError(f"{shown} changed between its check and its opening (Clause 15.3)")
    return fd


def _open_file(name: str, parent: int, shown: str) -> tuple[int, os.stat_result]:
    """Open regular file ``name`` under ``parent``: no link of either kind, the file examined."""
    st = _examine(name, parent, shown)
    if not stat.S_ISREG(st.st_mode):
        raise ExternalDataError(f"{shown} is not a regular file")
    if st.st_nlink != 1:
        raise ExternalDataError(f"{shown} has {st.st_nlink} hard links; only a file with one is read (Clause 15.3)")
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, dir_fd=parent)
    except OSError as e:
        raise ExternalDataError(f"{shown}: cannot open ({e.strerror or e}); was it replaced by a link?") from None
    opened = os.fstat(fd)
    problem = None
    if (opened.st_dev, opened.st_ino) != (st.st_dev, st.st_ino):
        problem = "changed between its check and its opening"
    elif not stat.S_ISREG(opened.st_mode):
        problem = "is not a regular file"
    elif opened.st_nlink != 1:
        problem = f"has {opened.st_nlink} hard links"
    if problem:
        os.close(fd)
        raise ExternalDataError(f"{shown} {problem} (Clause 15.3)")
    return fd, opened


def _read_exactly(fd: int, length: int, offset: int, shown: str) -> bytes:
    chunks, got = [], 0
    while got < length:
        chunk = os.pread(fd, min(length - got, 1 << 20), offset + got)
        if not chunk:
            raise ExternalDataError(f"{shown} ended after {offset + got} bytes; it changed while being read")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


class HashBudgetSpent(ExternalDataError):
    """Verifying a checksum would hash more than the run's budget allows; the reference is not read."""


@dataclass
class Digests:
    """The SHA-1 of each external file hashed in one run, and the bytes hashed so far.

    A file is known by (device, inode, size, modification time): forty references into one file
    hash it once, and a file rewritten meanwhile is hashed again. Hashing stops at ``budget``
    bytes per run (``MAX_EXTERNAL_HASH_BYTES``, Clause 15.4): a reference whose file would go
    past it is not read.
    """

    budget: int = field(default_factory=lambda: MAX_EXTERNAL_HASH_BYTES)  # read when a run starts
    hashed: int = 0
    known: dict[tuple[int, int, int, int], str] = field(default_factory=dict)

    def sha1(self, fd: int, st: os.stat_result, shown: str) -> str:
        """The SHA-1 of the whole open file ``fd`` (``st`` its ``fstat``)."""
        key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        if key in self.known:
            return self.known[key]
        if self.hashed + st.st_size > self.budget:
            raise HashBudgetSpent(
                f"verifying its checksum would hash the {st.st_size} bytes of {shown}, past the budget of "
                f"{self.budget} bytes per run ({self.hashed} spent; MAX_EXTERNAL_HASH_BYTES), so it is not read"
            )
        self.hashed += st.st_size  # charged up front: a file that fails halfway still cost its reads
        h = hashlib.sha1(usedforsecurity=False)
        offset = 0
        while offset < st.st_size:
            chunk = os.pread(fd, min(st.st_size - offset, 1 << 20), offset)
            if not chunk:
                raise ExternalDataError(f"{shown} ended after {offset} bytes; it changed while being read")
            h.update(chunk)
            offset += len(chunk)
        self.known[key] = h.hexdigest()
        return self.known[key]


def read(directory: Path, t: TensorProto, digests: Digests | None = None) -> bytes:
    """The raw contents of external tensor ``t``, relative to ``directory``, after every check.

    ``digests`` carries the checksums already computed and the hashing budget across the
    references of one run; without it, this call has a budget of its own.
    """
    if not SAFE_OPEN:
        raise ExternalDataError("this platform cannot open files without following links; not read")
    ref = parse_reference(t)
    parts = _components(ref.location)
    need = expected_bytes(t)
    if ref.length is not None and ref.length != need:
        raise ExternalDataError(f"declared length {ref.length} does not fit its dims and type, which need {need} bytes")
    root = os.path.realpath(directory)
    try:
        top = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as e:
        raise ExternalDataError(f"model directory {root}: {e.strerror or e}") from None
    fds = [top]
    try:
        for k, name in enumerate(parts[:-1]):
            fds.append(_open_directory(name, fds[-1], "/".join(parts[: k + 1])))
        fd, st = _open_file(parts[-1], fds[-1], ref.location)
        fds.append(fd)
        # Independent of the walk: the canonical path must lie inside the model directory.
        real = os.path.realpath(os.path.join(root, *parts))
        if os.path.commonpath([root, real]) != root:
            raise ExternalDataError(f"{ref.location} resolves outside the model directory (Clause 15.3)")
        length = st.st_size - ref.offset if ref.length is None else ref.length
        if ref.offset > st.st_size or length < 0 or ref.offset + length > st.st_size:
            raise ExternalDataError(
                f"{ref.location} has {st.st_size} bytes, shorter than offset {ref.offset} plus length "
                f"{length} (Clause 13.2)"
            )
        if length != need:
            raise ExternalDataError(
                f"{ref.location} holds {length} bytes from offset {ref.offset}; the tensor needs {need}"
            )
        digests = Digests() if digests is None else digests
        if ref.checksum is not None and digests.sha1(fd, st, ref.location) != ref.checksum.lower():
            raise ExternalDataError(f"{ref.location} does not match its checksum (Clause 13.3)")
        return _read_exactly(fd, length, ref.offset, ref.location)
    finally:
        for fd in reversed(fds):
            os.close(fd)


@dataclass(frozen=True)
class Problem:
    """Why an external tensor's contents were not read, and how much it matters."""

    message: str
    severity: str

    def __str__(self) -> str:
        return self.message


# Where ``contents_for_inference`` keeps the run's ``Digests`` in the engine's cache of references.
DIGESTS_KEY = ("external", "digests")


def contents_for_inference(
    t: TensorProto, directory: Path | None, cache: dict[Any, Any], opted_in: bool = True
) -> tuple[TensorProto, Problem | None]:
    """``t`` with its external contents when they can be read safely, else ``t`` and why not.

    ``directory`` is the model's (``None``: reading is off or there is no directory). A reference
    already found malformed by ``reference_problems`` is not followed and not reported again.
    ``cache`` keeps each reference's outcome for the run (Loop bodies are walked repeatedly), and
    under ``DIGESTS_KEY`` the run's checksums and hashing budget (``Digests``).
    """
    if not opted_in:
        return t, Problem("its contents are not read (reading external data is opt-in: read_external_data)", INFO)
    if directory is None:
        return t, Problem(
            "its contents are not read: the model was not loaded from a file, so there is no "
            "directory to resolve its location against (external_data_dir)",
            WARNING,
        )
    try:
        ref = parse_reference(t)
    except ExternalDataError:
        return t, None
    key = (str(directory), ref, t.data_type, tuple(t.dims))
    if key not in cache:
        digests = cache.setdefault(DIGESTS_KEY, Digests())
        try:
            cache[key] = read(directory, t, digests)
        except HashBudgetSpent as e:  # a limit of ours, not a fault of the model
            cache[key] = Problem(f"not read: {e}", WARNING)
        except ExternalDataError as e:
            cache[key] = Problem(f"not read: {e}", ERROR)
    got = cache[key]
    if isinstance(got, Problem):
        return t, got
    return with_contents(t, got), None


def with_contents(t: TensorProto, data: bytes) -> TensorProto:
    """A copy of ``t`` holding ``data`` as raw contents, as if stored in the model."""
    out = TensorProto()
    out.CopyFrom(t)
    del out.external_data[:]
    out.data_location = TensorProto.DEFAULT
    out.raw_data = data
    return out


# -- every external tensor of a model, read in (``verify``) ----------------------------------------


def _graph_tensors(g: GraphProto) -> Iterator[TensorProto]:
    yield from g.initializer
    for st in g.sparse_initializer:
        yield from (st.values, st.indices)
    for n in g.node:
        yield from _attribute_tensors(n.attribute)


def _attribute_tensors(attributes: Iterable[AttributeProto]) -> Iterator[TensorProto]:
    for a in attributes:
        sparse = [*([a.sparse_tensor] if a.HasField("sparse_tensor") else []), *a.sparse_tensors]
        yield from [*([a.t] if a.HasField("t") else []), *a.tensors]
        for st in sparse:
            yield from (st.values, st.indices)
        for g in [*([a.g] if a.HasField("g") else []), *a.graphs]:
            yield from _graph_tensors(g)


def external_tensors(model: ModelProto) -> list[TensorProto]:
    """Every tensor of ``model`` kept in an external file: initializers, sparse ones' parts and
    tensor attributes (a ``Constant``'s ``value``), in every graph, subgraph and function."""
    found = list(_graph_tensors(model.graph))
    for f in model.functions:
        for n in f.node:
            found.extend(_attribute_tensors(n.attribute))
    return [t for t in found if is_external(t)]


def read_all(model: ModelProto, directory: Path, max_bytes: int) -> ModelProto:
    """A copy of ``model`` with every external tensor read in, each after the checks of ``read``.

    The bytes their dims and types need are added up first: past ``max_bytes`` nothing is read.
    """
    copy = ModelProto()
    copy.CopyFrom(model)
    tensors = external_tensors(copy)
    total = 0
    for t in tensors:
        problems = reference_problems(t)
        if problems:
            raise ExternalDataError(f"external tensor `{t.name}`: {problems[0]}")
        total += expected_bytes(t)
    if total > max_bytes:
        raise ExternalDataError(
            f"its {len(tensors)} external tensors need {total} bytes, "
            f"over the limit of {max_bytes} (max_external_bytes)"
        )
    digests = Digests()
    for t in tensors:
        try:
            data = read(directory, t, digests)
        except ExternalDataError as e:
            raise ExternalDataError(f"external tensor `{t.name}`: {e}") from None
        del t.external_data[:]  # in place, as ``with_contents`` does on a copy
        t.data_location = TensorProto.DEFAULT
        t.raw_data = data
    return copy
