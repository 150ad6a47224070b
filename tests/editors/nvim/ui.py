"""Run one e2e case in a Neovim with a UI attached, the way a person sees it: messages go to the screen,
and one that does not fit stops Neovim at a hit-enter prompt (a headless Neovim never shows one).

Starts `nvim --embed` with the case (as run.sh would start it headless), attaches as its UI over
msgpack-RPC, and answers the case's checkpoints (harness.lua's T.ui_check): each time the case has
done a step and gone back to Neovim's main loop, this waits for Neovim to settle, asks nvim_get_mode()
whether it waits at a prompt (mode "r…", blocking), presses Enter if so, and resumes the case with what
it saw (the prompt and the screen's last lines); a checkpoint may ask for a picture of the screen
(tests/editors/.artifacts/<name>.png). Exits with Neovim's status.

    ui.py --nvim NVIM --init INIT_LUA --case CASE_LUA [--cols N] [FILE...]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import msgpack
from screenshot import Grid, render

ROWS = 30  # and --cols: 120 (a common terminal: 108 cells of room for a message) unless given
SETTLE = 0.8  # seconds the main loop gets to show a prompt after a step


class Embedded:
    """`nvim --embed` as a UI: a reader thread takes in redraws and the case's notifications."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.grid = Grid()
        self.lock = threading.Condition()
        self.answers: dict[int, Any] = {}
        self.checks: list[tuple[str, str]] = []  # (label, picture name or "") the case sent, not answered yet
        self.msgid = 0
        self.closed = False
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
        assert self.proc.stdout is not None
        while True:
            data = os.read(self.proc.stdout.fileno(), 1 << 16)
            if not data:
                with self.lock:
                    self.closed = True
                    self.lock.notify_all()
                return
            unpacker.feed(data)
            for msg in unpacker:
                with self.lock:
                    if msg[0] == 1:
                        self.answers[msg[1]] = msg
                    elif msg[0] == 2 and msg[1] == "redraw":
                        for batch in msg[2]:
                            for args in batch[1:]:
                                self.grid.event(batch[0], args)
                    elif msg[0] == 2 and msg[1] == "kin_check":
                        self.checks.append((str(msg[2][0]), str(msg[2][1]) if len(msg[2]) > 1 else ""))
                    self.lock.notify_all()

    def _send(self, msg: list[Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(msgpack.packb(msg))
        self.proc.stdin.flush()

    def request(self, method: str, *args: Any, timeout: float = 30.0) -> Any:
        with self.lock:
            self.msgid += 1
            msgid = self.msgid
        self._send([0, msgid, method, list(args)])
        with self.lock:
            if not self.lock.wait_for(lambda: msgid in self.answers or self.closed, timeout):
                raise TimeoutError(f"{method}: no answer in {timeout} s")
            if msgid not in self.answers:
                raise EOFError("Neovim exited")
            msg = self.answers.pop(msgid)
        if msg[2]:
            raise RuntimeError(f"{method}: {msg[2]}")
        return msg[3]

    def notify(self, method: str, *args: Any) -> None:
        self._send([2, method, list(args)])

    def next_check(self, timeout: float) -> tuple[str, str] | None:
        """The next checkpoint (label, picture): ("", "") when none came in `timeout`, None once Neovim
        has exited."""
        with self.lock:
            self.lock.wait_for(lambda: self.checks or self.closed, timeout)
            if self.checks:
                return self.checks.pop(0)
            return None if self.closed else ("", "")

    def screen(self) -> str:
        with self.lock:
            return self.grid.text()


def at_prompt(nvim: Embedded) -> bool:
    mode = nvim.request("nvim_get_mode")  # a "fast" call: answered even at a prompt
    return bool(mode.get("blocking")) and str(mode.get("mode", "")).startswith("r")


def check(nvim: Embedded, label: str) -> dict[str, Any]:
    """Let the main loop settle; a prompt it stops at is noted (with the screen) and answered."""
    end = time.monotonic() + SETTLE
    seen: dict[str, Any] = {"label": label, "prompt": False}
    while time.monotonic() < end:
        mode = nvim.request("nvim_get_mode")  # a "fast" call: answered even at a prompt
        if mode.get("blocking") and str(mode.get("mode", "")).startswith("r"):
            seen["prompt"] = True
            seen["mode"] = mode["mode"]
            break
        time.sleep(0.05)
    lines = [line.rstrip() for line in nvim.screen().split("\n")]
    seen["screen"] = "\n".join(lines)
    seen["cmdline"] = lines[-1] if lines else ""
    if seen["prompt"]:
        nvim.request("nvim_input", "<CR>")
    return seen


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--nvim", required=True)
    ap.add_argument("--init", required=True)
    ap.add_argument("--case", required=True)
    ap.add_argument("--cols", type=int, default=120)
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    os.environ["KIN_NVIM_UI"] = "1"
    argv = [args.nvim, "--embed", "--clean", "-n", "-i", "NONE", "-u", args.init, "-S", args.case]
    nvim = Embedded(argv + args.files)
    nvim.request("nvim_ui_attach", args.cols, ROWS, {"rgb": True, "ext_linegrid": True})
    channel = nvim.request("nvim_get_api_info")[0]
    nvim.request("nvim_set_var", "kin_ui_channel", channel)
    nvim.notify("nvim_exec_lua", "_G.kin_ui_start()", [])
    earlier: list[str] = []  # prompts met while the case waited for a step's effect
    while (checkpoint := nvim.next_check(0.5)) is not None:
        label, picture = checkpoint
        if label == "":
            # A prompt in the middle of a step stops Neovim before the case can look: seen here.
            if at_prompt(nvim):
                time.sleep(0.3)
                if at_prompt(nvim):
                    lines = [line.rstrip() for line in nvim.screen().split("\n")]
                    earlier.append("\n".join(lines[-3:]))
                    print(f"ui: a prompt during a step:\n{nvim.screen()}", file=sys.stderr, flush=True)
                    nvim.request("nvim_input", "<CR>")
            continue
        seen = check(nvim, label)
        seen["earlier"], earlier = earlier, []
        if picture:  # the screen as it is, for a person to look at: tests/editors/.artifacts/<picture>.png
            out = Path(__file__).resolve().parent.parent / ".artifacts" / f"{picture}.png"
            out.parent.mkdir(parents=True, exist_ok=True)
            with nvim.lock:
                render(nvim.grid, out)
            print(f"ui: pictured {out}", file=sys.stderr, flush=True)
        if seen["prompt"]:
            print(f"ui: a prompt after {label!r}:\n{seen['screen']}", file=sys.stderr, flush=True)
        try:  # resumed from the main loop (a notification), as a person's next step would come
            nvim.notify("nvim_exec_lua", "_G.kin_ui_resume(...)", [seen])
        except (BrokenPipeError, OSError):
            break
    return nvim.proc.wait(timeout=30)


if __name__ == "__main__":
    sys.exit(main())
