"""Store change events: what recall, diagnostics and editor notifications subscribe to.

The store emits one event per change it applies, on the thread that applied it; a subscriber that must
run elsewhere (the language server's event loop) hands the event over itself. Nothing outside the store
reaches into its dicts or its lock.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

log = logging.getLogger("kin_memory.store")

EventKind = Literal["created", "changed", "deleted", "reset"]


@dataclass(frozen=True)
class StoreEvent:
    kind: EventKind
    vpath: str | None = None  # None for "reset": the whole store was (re)loaded
    overlay: bool = False  # the memory is open in an editor: its buffer, not the disk, is what it holds
    buffer: bool = False  # the change is an editor buffer's text, not a write on disk
    saved: bool = False  # the editor just saved this buffer: the disk holds what the person wrote


Subscriber = Callable[[StoreEvent], None]


class StoreEvents:
    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []
        self._lock = threading.Lock()

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Add a subscriber; returns the function that removes it."""
        with self._lock:
            self._subscribers.append(subscriber)

        def unsubscribe() -> None:
            with self._lock:
                if subscriber in self._subscribers:
                    self._subscribers.remove(subscriber)

        return unsubscribe

    def emit(self, event: StoreEvent) -> None:
        with self._lock:
            subscribers = list(self._subscribers)
        for subscriber in subscribers:
            try:
                subscriber(event)
            except Exception as exc:  # noqa: BLE001 - one failing subscriber must not starve the others
                log.warning("store event subscriber failed on %s %s: %r", event.kind, event.vpath, exc)
