"""Every file the auditor writes (reports, mails, digests, the price cache, the outbox) is written
here: to a temporary file beside the target, flushed to disk, then renamed over it. A full disk or a
crash mid-write leaves the previous file as it was and no empty or cut-off file behind."""

from __future__ import annotations

import os
import stat
import uuid
from pathlib import Path


def write_atomic(path: Path, data: bytes | str) -> None:
    """Write `data` (str as UTF-8) to `path` whole or not at all; the directory must exist.

    A new file gets the permissions `open()` would give it (0o666 less the umask); a replaced one
    keeps its mode. A symlink is followed: the file it points to is replaced, the link stays. A
    target that is not a regular file (a device such as /dev/stdout, a FIFO) cannot be replaced by
    a rename and is written directly. Raises OSError; the temporary file is gone by then."""
    content = data.encode("utf-8") if isinstance(data, str) else data
    target = Path(os.path.realpath(path))
    try:
        existing: os.stat_result | None = target.stat()
    except FileNotFoundError:
        existing = None
    if existing is not None and not stat.S_ISREG(existing.st_mode):
        with target.open("wb") as handle:
            handle.write(content)
        return
    temporary = target.with_name(f".{target.name}.{uuid.uuid4().hex[:12]}.tmp")
    # O_EXCL: never another file of the same name; 0o666: the umask applies, as for open().
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            if existing is not None:
                os.chmod(temporary, stat.S_IMODE(existing.st_mode))
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())  # on disk before the rename: a crash never leaves an empty file
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
