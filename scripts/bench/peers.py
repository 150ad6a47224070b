"""Peers measured in the same run: vscode-markdown-languageserver (npm) on each size's store, and basic-memory
(PyPI) on a 1k store (it indexes about ten files a second: a 10k store takes it longer than the bench's half
hour), against our own measures of that same 1k store.

Both are installed on first use into the git-ignored ``.bench/peers/``: the npm package with markdown-it (the
Markdown server asks its client to parse files, so our Node driver answers with markdown-it tokens, as VS Code
does), basic-memory into a Python 3.12 virtual environment (it needs Python ≥ 3.12; ``PYENV_VERSION=3.12.1`` is
honoured when pyenv provides the interpreter). basic-memory may rewrite the files it indexes, so it works on a
copy of the store.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import statistics
import subprocess
import time
from pathlib import Path

from . import CACHE
from .generate import GeneratedStore

PEERS = CACHE / "peers"
NODE_DIR = PEERS / "node"
BM_VENV = PEERS / "bm"
DRIVER = Path(__file__).with_name("mdls_driver.js")
PEER_TIMEOUT = float(os.environ.get("BENCH_PEER_TIMEOUT", "1800"))


def _run(cmd: list[str], timeout: float, **kw) -> subprocess.CompletedProcess:
    """subprocess.run in its own session, killing the whole group on timeout: a peer leaves no orphans."""
    with subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True, **kw
    ) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # helpers it left behind
            except (ProcessLookupError, PermissionError):
                pass
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def _ensure_node() -> Path:
    modules = NODE_DIR / "node_modules"
    if not (modules / "vscode-markdown-languageserver").is_dir() or not (modules / "markdown-it").is_dir():
        NODE_DIR.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                "npm",
                "install",
                "--no-audit",
                "--no-fund",
                "--silent",
                "vscode-markdown-languageserver",
                "markdown-it",
            ],
            cwd=NODE_DIR,
            check=True,
            timeout=600,
        )
    return modules


def _ensure_basic_memory() -> Path:
    exe = BM_VENV / "bin" / "basic-memory"
    if not exe.exists():
        env = {**os.environ, "PYENV_VERSION": os.environ.get("PYENV_VERSION", "3.12.1")}
        subprocess.run(["python3.12", "-m", "venv", str(BM_VENV)], check=True, env=env, timeout=300)
        subprocess.run(
            [str(BM_VENV / "bin" / "pip"), "install", "-q", "basic-memory"], check=True, timeout=900
        )
    return exe


def markdown_ls(store: GeneratedStore) -> dict:
    """Time from spawn to its first workspace-symbol answer over the whole store, later answers, its peak RSS."""
    try:
        modules = _ensure_node()
    except (OSError, subprocess.SubprocessError) as exc:
        return {"error": f"install failed: {exc}"}
    words = store.vocab[:20:2] + store.vocab[2000:2020:2]
    queries = [w[:k] for w in words for k in range(2, len(w) + 1)]
    try:
        done = _run(["node", str(DRIVER), str(modules), str(store.root), *queries], PEER_TIMEOUT)
        return json.loads(done.stdout.strip().splitlines()[-1])
    except subprocess.TimeoutExpired:
        return {"error": f"no first workspace-symbol answer within {PEER_TIMEOUT:.0f}s"}
    except (IndexError, json.JSONDecodeError) as exc:
        return {"error": f"driver output unreadable: {exc}"}


def basic_memory(store: GeneratedStore) -> dict:
    """Its index of a copy of the same files (``project add`` indexes and waits) and its search via the CLI."""
    try:
        exe = _ensure_basic_memory()
    except (OSError, subprocess.SubprocessError) as exc:
        return {"error": f"install failed: {exc}"}
    home = PEERS / "basic-memory-home"
    home.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "HOME": str(home)}
    copy = PEERS / f"store-{store.label}"
    name = f"bench{store.label}"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(store.root, copy, ignore=shutil.ignore_patterns(".*"))
    _run([str(exe), "project", "remove", name], 120, env=env)
    shutil.rmtree(home / ".basic-memory", ignore_errors=True)  # a fresh database: a cold index
    out: dict = {}
    t0 = time.perf_counter()
    try:
        done = _run([str(exe), "project", "add", name, str(copy), "--local"], PEER_TIMEOUT, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"index did not finish within {PEER_TIMEOUT:.0f}s"}
    out["index_s"] = round(time.perf_counter() - t0, 2)
    out["index_log"] = done.stdout.strip().splitlines()[-1:] if done.stdout else []
    t0 = time.perf_counter()
    _run([str(exe), "--version"], 120, env=env)
    out["cli_startup_s"] = round(time.perf_counter() - t0, 2)
    lat = []
    for q in [store.vocab[3], store.vocab[40], store.vocab[2500], f"{store.vocab[1]} {store.vocab[900]}"]:
        t0 = time.perf_counter()
        _run([str(exe), "tool", "search-notes", q, "--project", name, "--compact"], 300, env=env)
        lat.append(time.perf_counter() - t0)
    # Its search is reachable only through the CLI (or MCP): each sample includes a process start.
    out["search_cli_median_s"] = round(statistics.median(lat), 2)
    return out


BASIC_MEMORY_SIZE = 1000  # the store basic-memory is measured on (see the module's docstring)


def run_peers(store: GeneratedStore, ours: dict, log=print) -> dict:
    log(f"  vscode-markdown-languageserver on the {store.label} store ...")
    return {"markdown_ls": markdown_ls(store)}


def run_basic_memory(store: GeneratedStore, ours: dict, log=print) -> dict:
    """basic-memory on `store` (the 1k one), with `ours`: our measures of the same store."""
    log(f"  basic-memory on the {store.label} store (this can take minutes) ...")
    return {"label": store.label, "basic_memory": basic_memory(store), "ours": ours}


def _ratio(peer: float | None, mine: float | None) -> str:
    if not peer or not mine:
        return "—"
    return f"{peer / mine:.1f}×"


def peer_table(peers: dict[str, dict], results: dict[str, dict], bm_run: dict | None = None) -> str:
    rows = ["| peer measure | size | peer | kin-memory | peer ÷ kin-memory |", "|---|---|---|---|---|"]
    for label, p in peers.items():
        r = results[label]
        md = p["markdown_ls"]
        if "error" in md:
            rows.append(f"| vscode-markdown-languageserver | {label} | cannot measure: {md['error']} | | |")
        else:
            cold = r["cold"]["diagnostics_s"]
            rows.append(
                f"| md-ls spawn → first workspace symbol vs our cold start | {label} | "
                f"{md['first_symbol_ms'] / 1000:.2f} s | {cold} s | {_ratio(md['first_symbol_ms'] / 1000, cold)} |"
            )
            ws = r["workspace_symbol"]["p95_ms"]
            rows.append(
                f"| md-ls later workspace symbol p95 | {label} | {md['later_symbol_p95_ms']:.2f} ms | {ws} ms | "
                f"{_ratio(md['later_symbol_p95_ms'], ws)} |"
            )
            rss = max(r["rss_cold"]["peak_tree_rss_mb"], r["rss_warm"]["peak_tree_rss_mb"])
            rows.append(
                f"| md-ls peak RSS | {label} | {md['peak_rss_mb']:.0f} MB | {rss} MB | {_ratio(md['peak_rss_mb'], rss)} |"
            )
            rows.append(
                f"| md-ls diagnostics, hover recall, memory search | {label} | cannot: no such features | | |"
            )
    if bm_run is not None:
        rows += _basic_memory_rows(bm_run["label"], bm_run["basic_memory"], bm_run["ours"])
    return "\n".join(rows)


def _basic_memory_rows(label: str, bm: dict, r: dict) -> list[str]:
    rows: list[str] = []
    if "error" in bm:
        rows.append(f"| basic-memory | {label} | cannot measure: {bm['error']} | | |")
    else:
        cold = r["cold"]["recall_sync_s"]
        rows.append(
            f"| basic-memory index vs our cold recall index | {label} | {bm['index_s']} s | {cold} s | "
            f"{_ratio(bm['index_s'], cold)} |"
        )
        s = r["search"]["p95_ms"]
        cli_ms = bm["search_cli_median_s"] * 1000
        rows.append(
            f"| basic-memory search-notes via its CLI (median, includes its app boot) vs our search p95 | "
            f"{label} | {cli_ms:.0f} ms | {s} ms | {_ratio(cli_ms, s)} |"
        )
        rows.append(
            f"| basic-memory diagnostics, hover, RSS of a server | {label} | cannot: CLI/MCP only | | |"
        )
    return rows
