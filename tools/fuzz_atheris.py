"""Coverage-guided fuzzing of every system's notation with atheris (libFuzzer), bounded in time.

Each input is one byte that picks a system (and whether the text carries the prefix or is rolled
as the room's system would), then UTF-8 text. ``tests/reliability/harness.exercise`` judges it
by the suite's rule: a result within the limits, or astragal's own ``InputError``; no other
exception, no operation over 10 s, odds summing to 1, canonical notation that reads back the
same. Findings do not stop the run: each new kind is kept (with its input) and the run goes on.

    pip install atheris
    python tools/fuzz_atheris.py --seconds 300            # every system
    python tools/fuzz_atheris.py --seconds 60 --system dice

Writes ``benchmarks/results/fuzz.txt``: inputs tried per system, the worst input for time and for
memory (tracemalloc peak), and every finding. Exit status 0 when there was no new finding.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "benchmarks" / "results" / "fuzz.txt"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=120, help="total fuzzing time")
    parser.add_argument("--system", action="append", help="only these systems")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--max-len", type=int, default=600, help="longest input in bytes")
    parser.add_argument("--seeds-dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    try:
        import atheris
    except ImportError:
        print("atheris is not installed: pip install atheris", file=sys.stderr)
        return 2
    if args.seeds_dir is None:
        # libFuzzer ends the process with C's exit(): Python's clean-up never runs there, so the
        # fuzzing runs in a child and this process removes the seed folder afterwards.
        with tempfile.TemporaryDirectory(prefix="astragal-atheris-") as seeds:
            return subprocess.run([sys.executable, __file__, *sys.argv[1:], "--seeds-dir", seeds],
                                  check=False).returncode

    with atheris.instrument_imports(include=["astragal"]):
        from tests.reliability import corpus, harness

        import astragal  # noqa: F401

        systems, broken = harness.installed_systems()
        harness.warm_up()  # loads every system's roller and odds code, instrumented
    names = sorted(n for n in systems if not args.system or n in args.system)
    if not names:
        print(f"no such installed system: {args.system}", file=sys.stderr)
        return 2
    stats = harness.Stats()
    kinds: dict[tuple[str, str, str, str], harness.Finding] = {}
    started = time.monotonic()
    last_write = [0.0]

    def write() -> None:
        elapsed = time.monotonic() - started
        t, w = stats.worst_time, stats.worst_memory
        lines = [
            (f"astragal coverage-guided fuzzing (atheris {version('atheris')}, "
             f"libFuzzer), {time.strftime('%Y-%m-%d')}"),
            f"command: python tools/fuzz_atheris.py --seconds {args.seconds}"
            + "".join(f" --system {s}" for s in args.system or []),
            (f"limits: the web table's (notation <= 500 characters, odds work <= 5e6); an "
             f"operation over {harness.HANG_SECONDS:g} s is a hang"), "",
            (f"inputs tried: {stats.inputs} in {elapsed:.0f} s "
             f"({stats.inputs / max(elapsed, 1e-9):.0f}/s)"),
            "per system: " + ", ".join(f"{k} {v}" for k, v in sorted(stats.per_system.items())),
            "operations: " + ", ".join(f"{k} {v}" for k, v in sorted(stats.ops.items())),
            (f"worked within the limits: {stats.accepted}; refused with astragal's own error: "
             f"{stats.refused}"),
            f"worst time per operation: {t[0] * 1000:.1f} ms ({t[1]} of {t[2][:100]!r})",
            (f"worst memory per operation: {w[0] / 2**20:.2f} MiB tracemalloc peak ({w[1]} of "
             f"{w[2][:100]!r})"),
            f"systems skipped (do not import): {', '.join(f'{k} ({v})' for k, v in broken.items()) or 'none'}",
            "",
            (f"findings: {len(kinds)} kind(s) "
             f"({sum(1 for k in kinds if harness.known(kinds[k]))} already known, in "
             "tests/reliability/test_known_faults.py)"),
        ]
        for f in kinds.values():
            lines.append(f"  {'known' if harness.known(f) else 'NEW'}: {f.describe()[:300]}")
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
        last_write[0] = time.monotonic()

    def one_input(data: bytes) -> None:
        if len(data) < 1:
            return
        name = names[data[0] % len(names)]
        prefixed = data[0] // len(names) % 4 != 0  # a quarter without the prefix
        body = data[1:].decode("utf-8", errors="replace")
        text = f"{systems[name][data[0] % len(systems[name])]}:{body}" if prefixed else body
        saved = list(harness.KNOWN)
        harness.KNOWN.clear()  # keep every finding, known or not, in this run's list
        try:
            found = harness.exercise(text, name, default_system=None if prefixed else name,
                                     stats=stats)
        finally:
            harness.KNOWN[:] = saved
        for f in found:
            key = (f.system, f.kind, f.error[:40], f.where)
            if key not in kinds:
                kinds[key] = f
                print(f"finding: {f.describe()[:300]}", file=sys.stderr, flush=True)
        if time.monotonic() - last_write[0] > 5:
            write()

    seeds = args.seeds_dir
    # The seed corpus: each valid roll and known-nasty input, behind its selector byte.
    for i, name in enumerate(names):
        for j, text in enumerate(corpus.SEEDS.get(name, []) + [
                t for t in corpus.NASTY if t.split(":", 1)[0] in systems[name]]):
            body = text.split(":", 1)[1] if ":" in text else text
            # the selector byte i + len(names) * 1 picks system i with its prefix
            Path(seeds, f"{name}-{j}").write_bytes(bytes([i + len(names)]) + body.encode())
    write()
    argv = [sys.argv[0], f"-max_total_time={args.seconds}", f"-max_len={args.max_len}",
            "-timeout=30", "-rss_limit_mb=4096", "-print_final_stats=1", seeds]
    try:
        atheris.Setup(argv, one_input)
        atheris.Fuzz()
    finally:
        write()
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    os._exit(code)
