"""Which of a store's paths changed on disk since a moment, told by a watcher (watchfiles, in a thread): what
lets a long-lived process (the MCP server) know which memories may differ from what the recall index
holds without a stat of every file.

A moment is a report number. `flush()` writes a marker file in the hidden folder and waits for the watcher
to report it: the kernel reports a watch's events in the order they happened, so by then every change made
before the call has been reported too. Whoever cannot get that assurance (the watcher did not start, the
store folder was replaced, a report took too long) gets None and looks at the files itself.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

from .paths import HIDDEN_DIR, HiddenRefused, open_hidden_dir, open_hidden_file

log = logging.getLogger("kin_memory.store")

# How long a flush waits for the watcher to report its marker before the answer is "cannot say". The
# watcher reports a few milliseconds after a change (STEP_MS quiet), at most DEBOUNCE_MS after the first.
FLUSH_TIMEOUT = 2.0
ARM_TIMEOUT = 2.0
STEP_MS = 5
DEBOUNCE_MS = 50
TICK_MS = 100  # how often the watcher looks at its stop flag when nothing changes
REWATCH_AFTER = 10.0  # seconds before a watch that stopped is started again


class DiskChanges:
    """A watch on one store folder and the report number of each path's last change."""

    def __init__(self, root: Path | str) -> None:
        self.root = os.path.realpath(root)
        self._marker = os.path.join(self.root, HIDDEN_DIR, f"changes-mark-{os.getpid()}-{id(self):x}")
        self._cond = threading.Condition()
        self._reports = 0
        self._changed: dict[str, int] = {}  # path → the report that last named it
        self._holds: dict[str, int] = {}  # each asker → the report it has taken in (see hold)
        self._armed = False
        self._stopped = False
        self._stop = threading.Event()
        # The marker's folder exists before the watch starts: one made afterwards is watched only once the
        # watcher has seen it made, and a marker written into it before that would never be reported.
        try:
            os.close(open_hidden_dir(self.root, create=True))
        except OSError:
            pass  # refused or not writable: no marker can be written, and flush says so
        self._thread = threading.Thread(target=self._watch, name="kin-memory-disk-changes", daemon=True)
        self._thread.start()

    # -- the watcher's side -----------------------------------------------------------------------
    def _watch(self) -> None:
        try:
            from watchfiles import watch

            for changes in watch(self.root, stop_event=self._stop, debounce=DEBOUNCE_MS, step=STEP_MS,
                                 rust_timeout=TICK_MS, yield_on_timeout=True, raise_interrupt=False,
                                 watch_filter=None):  # fmt: skip
                self._report({path for _, path in changes})
        except Exception as exc:  # noqa: BLE001 - no watch: every caller looks at the files itself
            log.info("store watch stopped: %s", exc)
        finally:
            with self._cond:
                self._stopped = True
                self._cond.notify_all()

    def _report(self, paths: set[str]) -> None:
        hidden = os.path.join(self.root, HIDDEN_DIR) + os.sep
        with self._cond:
            self._reports += 1
            for path in paths:
                if path == self._marker or not path.startswith(hidden):  # the index's own churn: not ours
                    self._changed[path] = self._reports
            self._armed = True
            self._cond.notify_all()

    # -- the asker's side -------------------------------------------------------------------------
    @property
    def usable(self) -> bool:
        with self._cond:
            return not self._stopped

    def flush(self) -> int | None:
        """The report by which every change made before this call has been reported; None when the watch
        cannot say (it stopped or did not report the marker in time: it is then stopped for good)."""
        with self._cond:
            if not self._cond.wait_for(lambda: self._armed or self._stopped, ARM_TIMEOUT) or self._stopped:
                return None
            before = self._reports
        if not self._touch_marker():
            return None
        with self._cond:
            if self._cond.wait_for(lambda: self._changed.get(self._marker, 0) > before or self._stopped,
                                   FLUSH_TIMEOUT) and not self._stopped:  # fmt: skip
                return self._reports
        self.stop()
        return None

    def changed_since(self, report: int) -> tuple[int, set[str]] | None:
        """(the report reached now, the paths reported after `report`: files and folders created, changed
        or removed), every change made before this call included; None when the watch cannot say."""
        now = self.flush()
        if now is None:
            return None
        with self._cond:
            return now, {p for p, n in self._changed.items() if report < n <= now and p != self._marker}

    def hold(self, who: str, report: int) -> None:
        """`who` has taken in every change up to `report`: what every holder has taken in is dropped."""
        with self._cond:
            self._holds[who] = report
            upto = min(self._holds.values())
            self._changed = {p: n for p, n in self._changed.items() if n > upto}

    def stop(self) -> None:
        self._stop.set()
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
        try:
            os.unlink(self._marker)
        except OSError:
            pass

    def _touch_marker(self) -> bool:
        """Write the marker through the hidden folder's guard (never through a link)."""
        try:
            dir_fd = open_hidden_dir(self.root, create=True)
        except (HiddenRefused, OSError):
            return False
        try:
            fd = open_hidden_file(
                dir_fd, os.path.basename(self._marker), os.O_WRONLY | os.O_CREAT | os.O_TRUNC
            )
            try:
                os.write(fd, str(self._reports).encode())
            finally:
                os.close(fd)
        except OSError:
            return False
        finally:
            os.close(dir_fd)
        return True


Moment = tuple[DiskChanges, int]  # a watch and one of its reports


class Follower:
    """One asker's place in a process's shared watch: the moment up to which it has taken in every change
    (held in the watch, which drops what every asker has taken in). A place on a watch that stopped is
    void, and so is one the watch cannot vouch for: the asker then looks at the files itself."""

    def __init__(self, shared: SharedWatch, who: str) -> None:
        self.shared = shared
        self.who = who
        self.place: Moment | None = None

    def mark(self) -> Moment | None:
        """A moment the watch vouches for, taken before the asker looks at the files itself."""
        watch = self.shared.get()
        report = watch.flush() if watch is not None else None
        return None if watch is None or report is None else (watch, report)

    def take(self, moment: Moment | None) -> None:
        """The asker has taken in every change up to `moment` (None: it has no place any more)."""
        self.place = moment
        if moment is not None:
            moment[0].hold(self.who, moment[1])

    def changes(self) -> tuple[Moment, set[str]] | None:
        """(the moment reached now, the paths reported since the asker's place), every change made before
        this call included; None when the asker has no place the watch vouches for."""
        if self.place is None:
            return None
        watch, report = self.place
        since = watch.changed_since(report) if self.shared.get() is watch else None
        if since is None:
            self.place = None
            return None
        return (watch, since[0]), since[1]


class SharedWatch:
    """One watch on a store for every asker of a process, started at the first ask and started again, after
    a pause, when it stopped (the store folder replaced, a report too late: what it said is void then, and
    each asker notices by getting another DiskChanges than the one it holds a report of)."""

    def __init__(self, root: Path | str) -> None:
        self.root = os.path.realpath(root)
        self.lock = threading.Lock()
        self.watch: DiskChanges | None = None
        self.failed_at = -REWATCH_AFTER

    def get(self) -> DiskChanges | None:
        with self.lock:
            if self.watch is not None and self.watch.usable:
                return self.watch
            if self.watch is not None:
                self.watch = None
                self.failed_at = time.monotonic()
            if time.monotonic() - self.failed_at < REWATCH_AFTER or not os.path.isdir(self.root):
                return None
            self.watch = DiskChanges(self.root)
            return self.watch

    def stop(self) -> None:
        with self.lock:
            if self.watch is not None:
                self.watch.stop()
