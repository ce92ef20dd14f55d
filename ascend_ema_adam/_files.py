"""Files written so that a kill cannot leave a half-written one: :func:`atomic_file`, which
every file this package writes goes through (``torch``-free: the numpy-only benchmarks use it)."""

from __future__ import annotations

import contextlib
import os
import socket
from typing import BinaryIO, Iterator


def _partial_prefix(path: str) -> str:
    directory, name = os.path.split(os.path.abspath(path))
    # The host and the process in the name: a later save removes only the leftovers of this
    # host's processes that no longer run (a save killed half-way), never another's live one.
    return os.path.join(directory, f".{name}.{socket.gethostname()}.")


def _remove_dead_partials(path: str) -> None:
    prefix = _partial_prefix(path)
    directory, stem = os.path.split(prefix)
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        if not (name.startswith(stem) and name.endswith(".partial")):
            continue
        pid = name[len(stem):-len(".partial")].split("-")[0]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            with contextlib.suppress(OSError):
                os.remove(os.path.join(directory, name))
        except OSError:
            pass  # alive under another user


def _fsync_directory(directory: str) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike, mode: str = "wb") -> Iterator[BinaryIO]:
    """Open a temporary file beside ``path`` for writing (``mode``: ``"wb"``, opened read-write,
    or ``"w"``, UTF-8 text); when the block ends without an exception it is flushed, fsynced and
    renamed over ``path``. An exception removes it and leaves ``path`` as it was; a process killed
    half-way leaves ``path`` as it was and a hidden ``.<name>.<host>.<pid>-<n>.partial`` that the
    next save of ``path`` removes."""
    if mode not in ("wb", "w"):
        raise ValueError(f"atomic_file: mode must be 'wb' or 'w', not {mode!r}")
    path = os.fspath(path)
    _remove_dead_partials(path)
    prefix = _partial_prefix(path)
    for attempt in range(1000):
        partial = f"{prefix}{os.getpid()}-{attempt}.partial"
        try:
            fd = os.open(partial, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(f"atomic_file: no free temporary name beside {path}")
    try:
        opened = os.fdopen(fd, "w+b") if mode == "wb" else os.fdopen(fd, "w", encoding="utf-8")
        with opened as file:
            yield file
            file.flush()
            os.fsync(file.fileno())
        os.replace(partial, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(partial)
        raise
    _fsync_directory(os.path.dirname(os.path.abspath(path)))
