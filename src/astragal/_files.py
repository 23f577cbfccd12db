"""Reading and replacing the user's files safely: regular files only, of bounded size.

The command line reads files the user names (an attack table, a fight, a log export). A name can
point at anything: ``/dev/zero`` or ``/dev/urandom`` (endless), a FIFO (blocks until a writer
comes, perhaps never), a directory, a huge file. Each is refused with the error the caller names
(an ``InputError`` subclass, so the CLI exits 2), before a byte is read: the file is opened
without blocking, checked to be a regular file, and read up to its limit and no further.
"""

from __future__ import annotations

import json
import os
import stat
from typing import Any

from ._errors import InputError

__all__ = ["MAX_TABLE_FILE", "check_replaceable", "open_regular", "read_bytes", "read_json",
           "read_text"]

MAX_TABLE_FILE = 1 << 20  # bytes: a GM's table file (an attack table is about 1 KiB)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def open_regular(path: str, what: str, limit: int, error: type[InputError] = InputError) -> int:
    """A descriptor of the regular file ``path`` of at most ``limit`` bytes, opened without
    blocking; else ``error`` (``FileNotFoundError`` passes through). The caller closes it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise error(f"cannot read the {what} {path}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise error(f"the {what} {path} is {_kind(info.st_mode)}, not a file: give the path "
                        "of a file")
        if info.st_size > limit:
            raise error(f"the {what} {path} is {info.st_size:,} bytes; the limit is {limit:,}")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bytes(path: str, what: str, limit: int, error: type[InputError] = InputError) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them, else ``error``.

    ``FileNotFoundError`` passes through (callers often have their own words for it).
    """
    fd = open_regular(path, what, limit, error)
    try:
        chunks: list[bytes] = []
        size = 0
        while size <= limit:  # the file may grow while it is read: never past the limit
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise error(f"the {what} {path} is over the limit of {limit:,} bytes")
        return b"".join(chunks)
    except OSError as exc:
        raise error(f"cannot read the {what} {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def read_text(path: str, what: str, limit: int, error: type[InputError] = InputError) -> str:
    """``read_bytes`` decoded as UTF-8 (``error`` when it is not UTF-8)."""
    data = read_bytes(path, what, limit, error)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"the {what} {path} is not UTF-8 text (byte {exc.start + 1})") from None


def check_replaceable(path: str, what: str, error: type[InputError] = InputError) -> None:
    """Refuse to write over ``path`` unless it is missing or a regular file (never a device,
    a pipe or a folder: replacing ``/dev/null`` would break the machine)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise error(f"cannot write the {what} {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise error(f"the {what} {path} is {_kind(info.st_mode)}, not a file: give the path of "
                    "a file")


def read_json(path: str, what: str, error: type[InputError], limit: int = MAX_TABLE_FILE) -> Any:
    """A user's JSON file (a GM's table) read whole. Errors name the file and the problem, never
    its contents: what it holds is checked by the game, from the data."""
    try:
        return json.loads(read_text(path, f"{what} file", limit, error))
    except FileNotFoundError as exc:
        raise error(f"cannot read the {what} file {path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise error(f"the {what} file {path} is not valid JSON: {exc.msg} at line "
                    f"{exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise error(f"the {what} file {path} is nested too deeply to be a table") from None
