"""Giving back to the system what the startup load freed.

Loading a big store allocates far more than it keeps (worker chunks unpickled, files read to index
them): glibc keeps the freed memory in its free lists and the resident size stays at the high-water
mark. Once the load and the first index sync are done, trimming returns it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging
import sys

log = logging.getLogger("kin_memory.lsp")


def release_freed() -> None:
    """Collect, then ask glibc to return its free memory to the system (a no-op elsewhere)."""
    gc.collect()
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    trim(0)
