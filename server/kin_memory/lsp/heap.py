"""Giving back to the system what the startup load freed.

Loading a big store allocates far more than it keeps (worker chunks unpickled, files read to index
them): glibc keeps the freed memory in its free lists and the resident size stays at the high-water
mark. Once the load and the first index sync are done, trimming returns it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
import logging
import sys
from typing import Any

log = logging.getLogger("kin_memory.lsp")


def release_freed() -> None:
    """Collect, then ask glibc to return its free memory to the system (a no-op elsewhere)."""
    gc.collect()
    fn = _malloc_trim()
    if fn is not None:
        fn(0)


@functools.cache
def _malloc_trim() -> Any:
    """glibc's malloc_trim, looked up once (None on other systems and C libraries, such as musl)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        fn = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_size_t]
    fn.restype = ctypes.c_int
    return fn
