"""Throw one input at astragal and judge what happens: the fuzz suites' single rule.

Every input either works within the limits or raises the package's own ``InputError`` (which
``LimitError`` is). Anything else is a *finding*:

``crash``      an exception that is not an ``InputError`` (a bare traceback for the player)
``hang``       one operation took longer than ``HANG_SECONDS`` (stopped by SIGALRM)
``memory``     one operation allocated more than ``MEMORY_BYTES`` at its peak (tracemalloc)
``roundtrip``  the canonical notation (``str(parse(x))``) does not parse back to the same notation

The harness times every operation and keeps its allocation peak, so a run can report the worst
input it found. It is shared by the Hypothesis suite (``tests/reliability/test_fuzz.py``) and the
coverage-guided fuzzer (``tools/fuzz_atheris.py``).
"""

from __future__ import annotations

import contextlib
import math
import signal
import threading
import time
import traceback
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import astragal
from astragal import InputError, Limits
from astragal._limits import WEB_LIMITS

__all__ = [
    "HANG_SECONDS",
    "KNOWN",
    "MEMORY_BYTES",
    "STATS",
    "WEB_LIMITS",
    "Finding",
    "Stats",
    "exercise",
    "installed_systems",
    "known",
    "warm_up",
]

HANG_SECONDS = 10.0
MEMORY_BYTES = 512 * 1024 * 1024
# What the public web table allows (``Table``'s own limits): the attack surface that matters.


def installed_systems() -> tuple[dict[str, tuple[str, ...]], dict[str, str]]:
    """(system name → prefixes) for every system that imports, and (name → why) for the rest."""
    from astragal.systems import get_system

    ok: dict[str, tuple[str, ...]] = {}
    skipped: dict[str, str] = {}
    for name, aliases in astragal.system_names().items():
        try:
            get_system(name)
        except Exception as exc:  # noqa: BLE001 - an unfinished system: skipped with the reason
            skipped[name] = f"{type(exc).__name__}: {exc}"
            continue
        ok[name] = (name, *aliases)
    return ok, skipped


@dataclass
class Finding:
    """One input that broke the rule."""

    kind: str
    system: str
    op: str
    text: str
    error: str = ""
    where: str = ""
    seconds: float = 0.0
    peak: int = 0

    def describe(self) -> str:
        return (f"{self.kind} in {self.system} {self.op}({self.text!r}): {self.error} "
                f"[{self.where}] after {self.seconds:.2f} s, peak {self.peak / 2**20:.1f} MiB")


@dataclass
class Stats:
    """What a run tried: counts per system and operation, and the worst input for time and memory."""

    inputs: int = 0
    per_system: dict[str, int] = field(default_factory=dict)
    ops: dict[str, int] = field(default_factory=dict)
    accepted: int = 0
    refused: int = 0
    worst_time: tuple[float, str, str] = (0.0, "", "")
    worst_memory: tuple[int, str, str] = (0, "", "")
    findings: list[Finding] = field(default_factory=list)
    known_findings: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "inputs": self.inputs, "per_system": dict(sorted(self.per_system.items())),
            "operations": dict(sorted(self.ops.items())), "accepted": self.accepted,
            "refused_with_input_error": self.refused,
            "worst_time": {"seconds": round(self.worst_time[0], 4), "op": self.worst_time[1],
                           "input": self.worst_time[2]},
            "worst_memory": {"peak_bytes": self.worst_memory[0], "op": self.worst_memory[1],
                             "input": self.worst_memory[2]},
            "known_findings_seen": self.known_findings,
            "new_findings": [f.describe() for f in self.findings],
        }

    def lines(self) -> list[str]:
        t, w = self.worst_time, self.worst_memory
        per = ", ".join(f"{k} {v}" for k, v in sorted(self.per_system.items()))
        return [
            f"fuzz: {self.inputs} inputs tried ({per})",
            (f"fuzz: operations {', '.join(f'{k} {v}' for k, v in sorted(self.ops.items()))}; "
             f"{self.accepted} worked, {self.refused} refused with astragal's own error"),
            f"fuzz: worst time {t[0] * 1000:.1f} ms ({t[1]} of {t[2][:80]!r})",
            f"fuzz: worst memory {w[0] / 2**20:.2f} MiB peak ({w[1]} of {w[2][:80]!r})",
            f"fuzz: {len(self.findings)} new finding(s), {self.known_findings} known (xfail) hit(s)",
        ]


STATS = Stats()

# Faults reported to the owner of a system and not yet fixed: (system, finding kind, exception
# type, text in the message or the raising function). The suite counts them instead of failing
# on them again. Every one reported so far is fixed, so the list is empty, and
# tests/reliability/test_known_faults.py keeps each of them fixed.
KNOWN: list[tuple[str, str, str, str]] = []


def known(f: Finding) -> bool:
    """Is this finding one of the reported faults (``KNOWN``)?"""
    return any(f.system == s and f.kind == k and f.error.startswith(e) and (
        m in f.error or m in f.where or m in f.text) for s, k, e, m in KNOWN)


class _Hang(BaseException):
    """Raised by the alarm in the operation that ran too long (BaseException: nothing eats it)."""


@contextlib.contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread() or seconds <= 0:
        yield
        return

    def ring(signum: int, frame: Any) -> None:
        raise _Hang()

    old = signal.signal(signal.SIGALRM, ring)
    # Rings again every 0.2 s: an exception raised inside a gc callback (Hypothesis keeps one)
    # is printed and dropped by Python, and the operation would run on unchecked.
    signal.setitimer(signal.ITIMER_REAL, seconds, 0.2)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _where(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if "astragal" in f.filename] or frames
    if not ours:
        return ""
    f = ours[-1]
    return f"{f.filename.rsplit('/src/', 1)[-1]}:{f.lineno} {f.name}"


def _run(op: str, system: str, text: str, fn: Callable[[], Any], stats: Stats,
         hang: float, memory: bool) -> tuple[Any, Finding | None, bool]:
    """(result, finding, refused) of one operation, timed and (``memory``) traced."""
    if memory:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
    start = time.perf_counter()
    result: Any = None
    finding: Finding | None = None
    refused = False
    try:
        with _alarm(hang):
            result = fn()
    except InputError:
        refused = True
    except _Hang as exc:
        finding = Finding("hang", system, op, text, f"still running after {hang:g} s",
                          _where(exc))
    except RecursionError as exc:
        finding = Finding("crash", system, op, text, f"RecursionError: {exc}", _where(exc))
    except MemoryError as exc:
        finding = Finding("memory", system, op, text, "MemoryError", _where(exc))
    except Exception as exc:  # noqa: BLE001 - anything else is exactly what we look for
        finding = Finding("crash", system, op, text, f"{type(exc).__name__}: {exc}"[:300],
                          _where(exc))
    seconds = time.perf_counter() - start
    peak = max(0, tracemalloc.get_traced_memory()[1] - base) if memory else 0
    with stats.lock:
        stats.ops[op] = stats.ops.get(op, 0) + 1
        if seconds > stats.worst_time[0]:
            stats.worst_time = (seconds, f"{system} {op}", text)
        if peak > stats.worst_memory[0]:
            stats.worst_memory = (peak, f"{system} {op}", text)
    if finding is None and peak > MEMORY_BYTES:
        finding = Finding("memory", system, op, text, f"peak {peak / 2**20:.0f} MiB")
    if finding is not None:
        finding.seconds, finding.peak = seconds, peak
    return result, finding, refused


_WARM: list[bool] = []


def warm_up() -> None:
    """Load every system and its odds code once (lazy imports would count as a slow input)."""
    if _WARM:
        return
    _WARM.append(True)
    from .corpus import SEEDS

    throwaway = Stats()
    for name in installed_systems()[0]:
        for text in SEEDS.get(name, [])[:3]:
            exercise(text, name, stats=throwaway, memory=False)


def exercise(text: str, system: str = "?", *, limits: Limits = WEB_LIMITS,
             default_system: str | None = None, odds: bool = True, seed: int = 7,
             hang: float = HANG_SECONDS, memory: bool = True,
             stats: Stats = STATS) -> list[Finding]:
    """Parse, round-trip, roll (seeded) and take the odds of ``text``; the findings (new ones)."""
    findings: list[Finding] = []
    started_tracing = False
    if memory and not tracemalloc.is_tracing():
        tracemalloc.start()
        started_tracing = True
    try:
        with stats.lock:
            stats.inputs += 1
            stats.per_system[system] = stats.per_system.get(system, 0) + 1
        parsed, f, refused = _run("parse", system, text,
                                  lambda: astragal.parse(text, limits=limits,
                                                         default_system=default_system),
                                  stats, hang, memory)
        if f is not None:
            findings.append(f)
        if parsed is not None:
            canon = str(parsed)
            again, f, _ = _run("reparse", system, canon,
                               lambda: astragal.parse(canon, limits=limits,
                                                      default_system=parsed.system),
                               stats, hang, memory)
            if f is not None:
                f.kind = "roundtrip" if f.kind == "crash" else f.kind
                findings.append(f)
            elif again is None:
                try:
                    astragal.parse(canon, limits=limits, default_system=parsed.system)
                    why = "?"
                except InputError as exc:
                    why = exc.message
                findings.append(Finding("roundtrip", system, "reparse", text,
                                        f"the canonical form {canon!r} is refused: {why}"))
            elif str(again) != canon:
                findings.append(Finding("roundtrip", system, "reparse", text,
                                        f"{canon!r} reads back as {str(again)!r}"))
            rolled, f, _ = _run("roll", system, text,
                                lambda: astragal.roll(text, seed=seed, limits=limits,
                                                      default_system=default_system),
                                stats, hang, memory)
            if f is not None:
                findings.append(f)
            elif rolled is not None:
                # The web stores the JSON of every roll: it must be JSON.
                _, f, _ = _run("roll.to_json", system, text,
                               lambda: __import__("json").dumps(rolled.to_json(),
                                                                allow_nan=False),
                               stats, hang, memory)
                if f is not None:
                    findings.append(f)
            if odds:
                result, f, _ = _run("odds", system, text,
                                    lambda: astragal.odds(text, limits=limits,
                                                          default_system=default_system),
                                    stats, hang, memory)
                if f is not None:
                    findings.append(f)
                elif result is not None:
                    # The web sends the odds as JSON (no NaN, no infinity).
                    _, f, _ = _run("odds.to_json", system, text,
                                   lambda: __import__("json").dumps(result.to_json(),
                                                                    allow_nan=False),
                                   stats, hang, memory)
                    if f is not None:
                        findings.append(f)
                    # Either may be empty (a bare total has no categories; an automatic success
                    # rolls no value); one that is there sums to 1 with any tail it says it cut.
                    for what, dist in (("outcome", result.outcomes),
                                       ("value", result.distribution)):
                        total = math.fsum(p for _, p in dist.items()) + dist.truncated
                        if len(dist) and not abs(total - 1.0) < 1e-6:
                            findings.append(Finding("crash", system, "odds", text,
                                                    f"{what} probabilities sum to {total!r}"))
        with stats.lock:
            if parsed is not None:
                stats.accepted += 1
            elif refused:
                stats.refused += 1
        new = [f for f in findings if not known(f)]
        with stats.lock:
            stats.known_findings += len(findings) - len(new)
            stats.findings.extend(new)
        return new
    finally:
        if started_tracing:
            tracemalloc.stop()
