"""Shared benchmark harness: first calls in fresh processes and warm repeats, interleaved with
the peer in the same run, ratios with their spread, results saved with the machine.

* cold: a fresh Python process per sample (byte-compiled sources, as an installed package is);
  the libraries are imported and the garbage they left collected, then the first call is timed.
  (Without the collection, whether the collector's generation-1 pass over the import's objects,
  ~0.4 ms, lands inside the first call depends on how many objects the import made, down to the
  size of the environment, not on the call: the same call measured 0.12 or 0.55 ms.) astragal
  and the peer alternate, so a busy machine slows both alike;
* warm: in this process, rounds that alternate the two, the best time of each round; each
  library keeps its caches (its normal behaviour);
* ratio = peer time / astragal time: the median of the per-round ratios, with their min–max.
"""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"

_WORKER = r"""
import sys, time
sys.path[:0] = [{root!r}, {src!r}]
{setup}
import gc
gc.collect()
t0 = time.perf_counter()
{call}
print(time.perf_counter() - t0)
"""


def compile_sources() -> None:
    """Byte-compile the source tree once, as pip does for an installed package."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "src")], check=True,
                   capture_output=True)


def machine() -> str:
    """The machine and software the figures were taken on."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = []
    for name in ("numpy", "icepool", "d20"):
        try:
            versions.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{name} (not installed)")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    return (f"{time.strftime('%Y-%m-%d %H:%M')}; {cpu}, {os.cpu_count()} cores "
            f"(load {load}); Python {platform.python_version()}; {', '.join(versions)}")


def cold(setup: str, call: str, env: dict[str, str] | None = None) -> float:
    """The time of ``call`` as the first call of a fresh process (after ``setup``)."""
    code = _WORKER.format(root=str(ROOT), src=str(ROOT / "src"), setup=setup, call=call)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, cwd=ROOT, env=env)
    return float(out.stdout.strip().splitlines()[-1])


def cold_pair(ours: tuple[str, str], peer: tuple[str, str],
              samples: int) -> tuple[list[float], list[float]]:
    """Interleaved fresh-process first calls: (astragal times, peer times)."""
    a: list[float] = []
    b: list[float] = []
    for _ in range(samples):
        a.append(cold(*ours))
        b.append(cold(*peer))
    return a, b


def process_pair(ours: Sequence[str], peer: Sequence[str],
                 samples: int) -> tuple[list[float], list[float]]:
    """Interleaved whole-process wall times of two commands (start-up included)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT / "src"), *filter(None, [os.environ.get("PYTHONPATH")])])}
    a: list[float] = []
    b: list[float] = []
    for _ in range(samples):
        for cmd, out in ((ours, a), (peer, b)):
            t = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True, cwd=ROOT, env=env)
            out.append(time.perf_counter() - t)
    return a, b


def warm_pair(ours: Callable[[], object], peer: Callable[[], object], rounds: int = 7,
              budget: float = 0.2) -> tuple[list[float], list[float]]:
    """Interleaved rounds in this process: each round the best time of each over ``budget``
    seconds (at least one call)."""
    ours()
    peer()
    a: list[float] = []
    b: list[float] = []
    for _ in range(rounds):
        for fn, out in ((ours, a), (peer, b)):
            best = float("inf")
            end = time.perf_counter() + budget
            while True:
                t = time.perf_counter()
                fn()
                best = min(best, time.perf_counter() - t)
                if time.perf_counter() > end:
                    break
            out.append(best)
    return a, b


def ratio(ours: Sequence[float], peer: Sequence[float]) -> tuple[float, float, float]:
    """(median, min, max) of the per-sample ratios peer / astragal."""
    rs = [p / o for o, p in zip(ours, peer) if o > 0]
    return statistics.median(rs), min(rs), max(rs)


def fmt_time(t: float) -> str:
    if t >= 1:
        return f"{t:.2f} s"
    if t >= 1e-3:
        return f"{t * 1e3:.1f} ms"
    return f"{t * 1e6:.1f} µs"


def row(name: str, ours: Sequence[float], peer: Sequence[float], goal: float) -> str:
    """A table row: medians, the ratio with its spread, and whether it meets its goal."""
    r, lo, hi = ratio(ours, peer)
    status = "ok" if r >= goal else f"BELOW GOAL (≥{goal:g}x)"
    return (f"| {name} | {fmt_time(statistics.median(ours))} | "
            f"{fmt_time(statistics.median(peer))} | {r:.2f}x ({lo:.2f}–{hi:.2f}) | {status} |")


HEADER = ("| case | astragal | peer | ratio (min–max) | goal |\n"
          "|---|---|---|---|---|")


def save(name: str, title: str, lines: Sequence[str]) -> str:
    """Write ``benchmarks/results/NAME.md`` with the machine, and return its text."""
    text = "\n".join([f"# {title}", "", f"Machine: {machine()}", "", *lines, ""])
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.md").write_text(text, encoding="utf-8")
    return text
