"""Files that a kill cannot corrupt: every file this package writes goes through
:func:`atomic_file` (a temporary file in the target's directory, flushed, fsynced, renamed over
the target, the directory fsynced), so a reader sees the previous complete file or the new one.

:func:`save` / :func:`load` are ``torch.save`` / ``torch.load`` with an integrity check: the file
is torch's own zip archive (``torch.load`` reads it as is) whose zip comment holds the SHA-256 of
the bytes before it; :func:`load` refuses a file whose digest is missing or wrong (truncated,
overwritten, bit-flipped) with :class:`CheckpointError` before unpickling anything.
:func:`save_checkpoint` / :func:`load_checkpoint` keep a model, its optimizer (a
:class:`~ascend_ema_adam.FusedEmaAdamW` with its EMA, or any torch optimizer) and the caller's
own values in one such file; loading checks the whole file against the model first and leaves
the model and the optimizer as they were when it refuses."""

from __future__ import annotations

import hashlib
import os
import struct
from typing import Any, BinaryIO

import torch

from ._files import atomic_file

__all__ = ["CheckpointError", "atomic_file", "save", "load", "save_checkpoint", "load_checkpoint"]

# The zip end-of-central-directory record: 22 bytes, the last two the comment's length.
_EOCD_SIGNATURE = b"PK\x05\x06"
_EOCD_SIZE = 22
_DIGEST_PREFIX = b"ascend_ema_adam:sha256:"
_DIGEST_COMMENT_SIZE = len(_DIGEST_PREFIX) + 64
_CHUNK = 1 << 24
_CHECKPOINT_FORMAT = "ascend_ema_adam.checkpoint/1"


class CheckpointError(RuntimeError):
    """A file :func:`load` refuses: not written by :func:`save`, truncated or corrupted."""


class _HashingWriter:
    """A write-only stream that digests all but the last two bytes written (the zip comment's
    length, which :func:`save` rewrites)."""

    def __init__(self, file: BinaryIO):
        self._file = file
        self._digest = hashlib.sha256()
        self._held = b""

    def write(self, data) -> int:
        view = memoryview(data).cast("B")
        if len(view) >= 2:  # (no copies of the data: checkpoints are gigabytes)
            self._digest.update(self._held)
            self._digest.update(view[:-2])
            self._held = bytes(view[-2:])
        else:
            joined = self._held + bytes(view)
            self._digest.update(joined[:-2])
            self._held = joined[-2:]
        return self._file.write(view)

    def flush(self) -> None:
        self._file.flush()

    def hexdigest(self) -> bytes:
        return self._digest.hexdigest().encode("ascii")


def save(obj: Any, path: str | os.PathLike) -> None:
    """``torch.save(obj, path)``, atomically (:func:`atomic_file`) and with the archive's SHA-256
    in its zip comment for :func:`load` to check."""
    with atomic_file(path) as file:
        writer = _HashingWriter(file)
        torch.save(obj, writer)
        file.flush()
        file.seek(-_EOCD_SIZE, os.SEEK_END)
        record = file.read(_EOCD_SIZE)
        if record[:4] != _EOCD_SIGNATURE or record[-2:] != b"\0\0":
            raise CheckpointError("save: torch.save did not end its archive with an empty zip "
                                  "comment; this torch version is not supported")
        file.seek(-2, os.SEEK_END)
        file.write(struct.pack("<H", _DIGEST_COMMENT_SIZE) + _DIGEST_PREFIX + writer.hexdigest())


def _verified(file: BinaryIO, path: str) -> None:
    size = os.fstat(file.fileno()).st_size
    tail = _EOCD_SIZE + _DIGEST_COMMENT_SIZE
    if size < tail:
        raise CheckpointError(f"load: {path} is {size} bytes, too short for a file written by "
                              "ascend_ema_adam.checkpoint.save (truncated?)")
    file.seek(size - tail)
    record = file.read(tail)
    comment = record[_EOCD_SIZE:]
    if (record[:4] != _EOCD_SIGNATURE
            or record[_EOCD_SIZE - 2:_EOCD_SIZE] != struct.pack("<H", _DIGEST_COMMENT_SIZE)
            or not comment.startswith(_DIGEST_PREFIX)):
        raise CheckpointError(
            f"load: {path} has no ascend_ema_adam digest at its end: it is truncated, or was not "
            "written by ascend_ema_adam.checkpoint.save (torch.load reads a plain torch.save "
            "file)")
    digest = hashlib.sha256()
    file.seek(0)
    remaining = size - _DIGEST_COMMENT_SIZE - 2
    while remaining:
        chunk = file.read(min(_CHUNK, remaining))
        if not chunk:
            raise CheckpointError(f"load: {path} changed while it was read")
        digest.update(chunk)
        remaining -= len(chunk)
    if digest.hexdigest().encode("ascii") != comment[len(_DIGEST_PREFIX):]:
        raise CheckpointError(f"load: {path} is corrupted: its SHA-256 is not the one saved "
                              "with it; nothing was loaded from it")


def load(path: str | os.PathLike, **torch_load_kwargs) -> Any:
    """``torch.load`` of a file :func:`save` wrote, after checking its digest (the same open
    file is checked and read). Keyword arguments go to ``torch.load`` (``map_location``,
    ``weights_only``...). Raises :class:`CheckpointError` for a truncated or corrupted file and
    ``FileNotFoundError`` for a missing one."""
    path = os.fspath(path)
    with open(path, "rb") as file:
        _verified(file, path)
        file.seek(0)
        return torch.load(file, **torch_load_kwargs)


def save_checkpoint(path: str | os.PathLike, model: torch.nn.Module | None = None,
                    optimizer: torch.optim.Optimizer | None = None, **extra: Any) -> None:
    """Save ``model.state_dict()``, ``optimizer.state_dict()`` (a FusedEmaAdamW's holds its
    EMA) and ``extra`` (the step, the scheduler's or the scaler's state dict...: anything
    ``torch.load(weights_only=True)`` reads) in one file, with :func:`save`."""
    if model is not None and not isinstance(model, torch.nn.Module):
        raise TypeError(f"save_checkpoint: model must be a torch.nn.Module, not "
                        f"{type(model).__name__}")
    if optimizer is not None and not isinstance(optimizer, torch.optim.Optimizer):
        raise TypeError(f"save_checkpoint: optimizer must be a torch.optim.Optimizer, not "
                        f"{type(optimizer).__name__}")
    save({"format": _CHECKPOINT_FORMAT,
          "model": None if model is None else model.state_dict(),
          "optimizer": None if optimizer is None else optimizer.state_dict(),
          "extra": extra}, path)


def _check_model_state(path: str, model: torch.nn.Module, saved: Any) -> None:
    """Refuse before copying anything: torch's ``load_state_dict`` copies the entries that fit
    and raises about the rest afterwards."""
    if not isinstance(saved, dict):
        raise CheckpointError(f"load_checkpoint: {path} holds no model state")
    current = model.state_dict()
    missing = [k for k in current if k not in saved]
    unexpected = [k for k in saved if k not in current]
    wrong = [f"{k}: saved {tuple(saved[k].shape)}, model {tuple(v.shape)}"
             for k, v in current.items() if k in saved and isinstance(v, torch.Tensor)
             and (not isinstance(saved[k], torch.Tensor) or saved[k].shape != v.shape)]
    if missing or unexpected or wrong:
        raise CheckpointError(
            f"load_checkpoint: {path} does not fit the model (nothing was loaded): missing "
            f"{missing[:5]}, unexpected {unexpected[:5]}, shapes {wrong[:5]}")


def load_checkpoint(path: str | os.PathLike, model: torch.nn.Module | None = None,
                    optimizer: torch.optim.Optimizer | None = None,
                    map_location: Any = "cpu") -> dict[str, Any]:
    """Load a :func:`save_checkpoint` file into ``model`` and ``optimizer`` and return its extra
    values. The whole file is read and checked first (digest, contents, the model's names and
    shapes); a refusal leaves both as they were (:class:`CheckpointError`, or the optimizer's
    own ``ValueError``), and a model or optimizer asked for that the file lacks is refused."""
    path = os.fspath(path)
    saved = load(path, map_location=map_location, weights_only=True)
    if not isinstance(saved, dict) or saved.get("format") != _CHECKPOINT_FORMAT:
        raise CheckpointError(f"load_checkpoint: {path} was not written by save_checkpoint")
    if model is not None:
        _check_model_state(path, model, saved["model"])
    if optimizer is not None:
        if not isinstance(saved["optimizer"], dict):
            raise CheckpointError(f"load_checkpoint: {path} holds no optimizer state")
        # References, not copies: load_state_dict replaces the state's tensors (it does not
        # write into them), so these restore the optimizer if the model's load fails.
        before = optimizer.state_dict()
        optimizer.load_state_dict(saved["optimizer"])
    if model is not None:
        try:
            model.load_state_dict(saved["model"])
        except BaseException:
            if optimizer is not None:
                optimizer.load_state_dict(before)
            raise
    return saved["extra"]
