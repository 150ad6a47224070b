"""Percentiles of latency samples, as the bench reports them."""

from __future__ import annotations


def pct(values: list[float], q: float) -> float:
    """The q-quantile by nearest rank (no interpolation), rounded to 0.01."""
    s = sorted(values)
    return round(s[min(len(s) - 1, int(len(s) * q))], 2) if s else float("nan")


def latency_summary(ms: list[float]) -> dict:
    """p50, p95, p99 and max of millisecond samples, and how many there were: every sample counts."""
    return {
        "p50_ms": pct(ms, 0.5),
        "p95_ms": pct(ms, 0.95),
        "p99_ms": pct(ms, 0.99),
        "max_ms": round(max(ms), 2) if ms else None,
        "n": len(ms),
    }
