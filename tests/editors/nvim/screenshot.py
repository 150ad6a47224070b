"""A real picture of Neovim for the README: attaches to `nvim --embed` as a UI over msgpack-RPC (the
protocol every Neovim GUI speaks), opens a memory and :KinMemoryHealth with the README's setup, and
paints the screen grid Neovim sends into a PNG (Pillow, DejaVu Sans Mono).

Run by run.sh (with the environment of a case: private HOME and XDG dirs, a fresh store in
KIN_NVIM_STORE, the project's kin-memory first on PATH):

    screenshot.py --nvim NVIM --init INIT_LUA --out FILE.png

A case can also picture its own Neovim at a moment of its choosing (harness.lua's T.screenshot): the
case listens on a socket, and this script attaches to it as a UI, paints what is on the screen, checks
that the expected texts are shown, and detaches:

    screenshot.py --attach SOCKET --out FILE.png [--expect TEXT]...
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import msgpack
from PIL import Image, ImageDraw, ImageFont

COLS, ROWS = 118, 44
FONT_SIZE = 15
FONT_DIRS = ("/usr/share/fonts/truetype/dejavu", "/usr/share/fonts/TTF", "/usr/share/fonts/dejavu")
DAY = 86400


class Grid:
    """The UI state the `redraw` notifications describe (ext_linegrid, one grid)."""

    def __init__(self) -> None:
        self.width, self.height = COLS, ROWS
        self.cells: list[list[tuple[str, int]]] = []
        self.attrs: dict[int, dict[str, Any]] = {0: {}}
        self.fg, self.bg, self.sp = 0xE0E2EA, 0x14161B, 0xFF0000
        self.flushed = False
        self.resize(COLS, ROWS)

    def resize(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.cells = [[(" ", 0)] * width for _ in range(height)]

    def event(self, name: str, args: list[Any]) -> None:
        if name == "default_colors_set":
            fg, bg, sp = args[:3]
            self.fg = fg if fg >= 0 else self.fg
            self.bg = bg if bg >= 0 else self.bg
            self.sp = sp if sp >= 0 else self.sp
        elif name == "hl_attr_define":
            self.attrs[args[0]] = args[1]
        elif name == "grid_resize":
            self.resize(args[1], args[2])
        elif name == "grid_clear":
            self.resize(self.width, self.height)
        elif name == "grid_line":
            self.line(args[1], args[2], args[3])
        elif name == "grid_scroll":
            self.scroll(*args[1:7])
        elif name == "flush":
            self.flushed = True

    def line(self, row: int, col: int, cells: list[list[Any]]) -> None:
        hl = 0
        for cell in cells:
            text = cell[0]
            if len(cell) > 1:
                hl = cell[1]
            repeat = cell[2] if len(cell) > 2 else 1
            for _ in range(repeat):
                if 0 <= row < self.height and 0 <= col < self.width:
                    self.cells[row][col] = (text, hl)
                col += 1

    def scroll(self, top: int, bot: int, left: int, right: int, rows: int, _cols: int) -> None:
        src = [row[:] for row in self.cells]
        for row in range(top, bot):
            from_row = row + rows
            if top <= from_row < bot:
                self.cells[row][left:right] = src[from_row][left:right]

    def text(self) -> str:
        return "\n".join("".join(c[0] for c in row) for row in self.cells)


class Nvim:
    """A msgpack-RPC client of `nvim --embed` (argv) or of a running Neovim's socket (address) that is
    also its UI."""

    def __init__(self, argv: list[str] | None = None, address: str | None = None) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.sock: socket.socket | None = None
        if argv is not None:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        else:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.connect(str(address))
        self.unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
        self.msgid = 0
        self.grid = Grid()

    def _read(self) -> bytes:
        if self.sock is not None:
            return self.sock.recv(1 << 16)
        assert self.proc is not None and self.proc.stdout is not None
        return os.read(self.proc.stdout.fileno(), 1 << 16)

    def _write(self, data: bytes) -> None:
        if self.sock is not None:
            self.sock.sendall(data)
            return
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def _next(self) -> Any:
        while True:
            try:
                return next(self.unpacker)
            except StopIteration:
                data = self._read()
                if not data:
                    raise EOFError("Neovim exited") from None
                self.unpacker.feed(data)

    def _handle(self, msg: list[Any]) -> None:
        if msg[0] == 2 and msg[1] == "redraw":
            for batch in msg[2]:
                for args in batch[1:]:
                    self.grid.event(batch[0], args)

    def request(self, method: str, *args: Any) -> Any:
        self.msgid += 1
        self._write(msgpack.packb([0, self.msgid, method, list(args)]))
        while True:
            msg = self._next()
            if msg[0] == 1 and msg[1] == self.msgid:
                if msg[2]:
                    raise RuntimeError(f"{method}: {msg[2]}")
                return msg[3]
            self._handle(msg)

    def lua(self, code: str, *args: Any) -> Any:
        return self.request("nvim_exec_lua", code, list(args))

    def wait(self, code: str, what: str, timeout: float = 30.0) -> Any:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            value = self.lua(code)
            if value:
                return value
            time.sleep(0.1)
        raise TimeoutError(f"timed out waiting for {what}")

    def settle(self) -> None:
        """Redraw everything and take in the redraw batches until the screen is flushed."""
        self.grid.flushed = False
        self.request("nvim_command", "redraw!")
        self.request("nvim_eval", "1")  # a round trip: every redraw batch sent before it has arrived
        if not self.grid.flushed:
            raise RuntimeError("Neovim did not flush its screen")

    def close(self) -> None:
        if self.sock is not None:  # a case's Neovim: it goes on without this UI
            self.request("nvim_ui_detach")
            self.sock.close()
            return
        try:
            self.request("nvim_command", "qall!")
        except EOFError:
            pass
        assert self.proc is not None
        self.proc.wait(timeout=10)


def find_font(bold: bool) -> str:
    name = "DejaVuSansMono-Bold.ttf" if bold else "DejaVuSansMono.ttf"
    for folder in FONT_DIRS:
        path = Path(folder) / name
        if path.exists():
            return str(path)
    raise FileNotFoundError(f"{name} (install fonts-dejavu-core)")


def rgb(value: int) -> tuple[int, int, int]:
    return (value >> 16) & 0xFF, (value >> 8) & 0xFF, value & 0xFF


def render(grid: Grid, out: Path) -> None:
    regular = ImageFont.truetype(find_font(False), FONT_SIZE)
    bold = ImageFont.truetype(find_font(True), FONT_SIZE)
    ascent, descent = regular.getmetrics()
    cw, ch = round(regular.getlength("M")), ascent + descent + 3
    pad = 12
    img = Image.new("RGB", (grid.width * cw + 2 * pad, grid.height * ch + 2 * pad), rgb(grid.bg))
    draw = ImageDraw.Draw(img)
    for r, row in enumerate(grid.cells):
        for c, (text, hl) in enumerate(row):
            attr = grid.attrs.get(hl, {})
            fg, bg = attr.get("foreground", grid.fg), attr.get("background", grid.bg)
            if attr.get("reverse"):
                fg, bg = bg, fg
            x, y = pad + c * cw, pad + r * ch
            if bg != grid.bg:
                draw.rectangle([x, y, x + cw - 1, y + ch - 1], fill=rgb(bg))
            if text.strip():
                draw.text((x, y + 1), text, font=bold if attr.get("bold") else regular, fill=rgb(fg))
            if attr.get("undercurl") or attr.get("underline"):
                sp = attr.get("special", fg)
                draw.line([x, y + ch - 2, x + cw - 1, y + ch - 2], fill=rgb(sp))
    img.save(out, optimize=True)


def prepare_store(store: Path) -> None:
    """Beside the fixture: an episode expiring this week, a quiet fact, a duplicate (the view's sections)."""
    now = time.time()
    standup = store / "episodes" / "standup.md"
    standup.write_text(
        "---\ncategory: episodic\nworkspace: global\n---\n# Stand-up moved\n\n"
        "The daily stand-up moved to 9:30 for the winter.\n"
    )
    os.utime(standup, (now - 38 * DAY, now - 38 * DAY))
    (store / "facts" / "vault.md").write_text(
        "---\ncategory: project-fact\nworkspace: /home/me/src/old-billing\n---\n# Vault\n\n"
        "The old billing service kept its deploy keys in the vault.\n"
    )
    (store / "facts" / "build-notes.md").write_text((store / "facts" / "build.md").read_text())


SETUP_LUA = """
vim.diagnostic.config({ virtual_text = true })  -- what most configurations turn on
vim.o.laststatus = 2
vim.o.cmdheight = 1
"""

SHOW_LUA = """
local buf = vim.api.nvim_get_current_buf()
local ok = #vim.lsp.get_clients({ bufnr = buf, name = 'kin_memory' }) > 0 and #vim.diagnostic.get(buf) > 0
if not ok then return false end
for name, id in pairs(vim.api.nvim_get_namespaces()) do
  if name:find('^nvim%.lsp%.codelens') and #vim.api.nvim_buf_get_extmarks(buf, id, 0, -1, {}) > 0 then
    return true
  end
end
return false
"""

VIEW_LUA = """
local b = vim.fn.bufnr('kin-memory://health')
return b ~= -1 and vim.api.nvim_buf_line_count(b) > 10
"""


def attach(address: str, out: Path, expect: list[str]) -> int:
    """Picture a case's Neovim as it is now: attach, let it paint, check, render, detach."""
    nvim = Nvim(address=address)
    try:
        nvim.request("nvim_ui_attach", COLS, ROWS, {"rgb": True, "ext_linegrid": True})
        nvim.settle()
        screen = nvim.grid.text()
        missing = [needle for needle in expect if needle not in screen]
        if missing:
            raise RuntimeError(f"the screen does not show {missing!r}:\n{screen}")
        out.parent.mkdir(parents=True, exist_ok=True)
        render(nvim.grid, out)
    finally:
        nvim.close()
    print(f"screenshot: {out} ({COLS}x{ROWS} cells)")
    print(screen)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--nvim")
    ap.add_argument("--init")
    ap.add_argument("--attach", metavar="SOCKET", help="a running Neovim's socket: picture it as it is")
    ap.add_argument("--expect", action="append", default=[], help="a text the screen must show (--attach)")
    ap.add_argument("--out", required=True, type=Path)
    args = ap.parse_args()
    if args.attach:
        return attach(args.attach, args.out, args.expect)
    if not (args.nvim and args.init):
        ap.error("--nvim and --init are needed (or --attach)")
    store = Path(os.environ["KIN_NVIM_STORE"])
    prepare_store(store)
    memory = store / "facts" / "cache.md"
    nvim = Nvim([args.nvim, "--embed", "--clean", "-n", "-i", "NONE", "-u", args.init, str(memory)])
    try:
        nvim.request("nvim_ui_attach", COLS, ROWS, {"rgb": True, "ext_linegrid": True})
        nvim.lua(SETUP_LUA)
        nvim.wait(SHOW_LUA, "kin-memory's diagnostics and code lens on the memory")
        nvim.request("nvim_command", "KinMemoryHealth")
        nvim.wait(VIEW_LUA, "the health view")
        nvim.request("nvim_command", "wincmd k | resize 9 | wincmd j | normal! gg")
        nvim.request("nvim_command", "echo ''")
        time.sleep(0.3)
        nvim.settle()
        screen = nvim.grid.text()
        for needle in ("Memory health", "By category", "projcet-fact", "project-fact"):
            if needle not in screen:
                raise RuntimeError(f"the screen does not show {needle!r}:\n{screen}")
        args.out.parent.mkdir(parents=True, exist_ok=True)
        render(nvim.grid, args.out)
    finally:
        nvim.close()
    print(f"screenshot: {args.out} ({COLS}x{ROWS} cells)")
    print(screen)
    return 0


if __name__ == "__main__":
    sys.exit(main())
