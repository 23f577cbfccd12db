"""Exact odds for the web table, computed where they can be stopped: a small pool of processes.

The engine refuses odds whose estimated work is over the limit, but an estimate can be wrong, and
a thread cannot be stopped in Python. So each computation runs in a worker process with a hard cut:
past ``seconds`` of wall-clock time (which bounds its CPU time too) the worker is killed and a new
one takes its place; its address space is capped (``memory``), so an allocation past it is an
error in the worker, not the server's memory. The worker reports the CPU time it used, which the
table charges to the address that asked.

Workers are plain ``python`` processes speaking pickled jobs over their stdin and stdout (nothing
of the server is inherited, and no ``__main__`` is re-imported); a new one costs an import of
astragal, about 0.3 s, and is only needed after a cut.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import selectors
import struct
import subprocess
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from typing import Any

from .._limits import Limits

log = logging.getLogger("astragal.web")

__all__ = ["OddsPool", "Outcome", "short_error"]

STARTUP_SECONDS = 60.0  # a new worker's import of astragal (about 0.3 s; far more under load)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a worker answered: ``kind`` is ``ok`` (``value`` is the page), ``input`` (``value``
    is (error class name, message, text, span)), ``overrun`` (killed at the cut), ``memory``
    (over its address space), or ``crash`` (``value`` is a one-line description)."""

    kind: str
    value: Any
    cpu: float


def short_error(exc: BaseException) -> str:
    """One line for the log: the exception, its message (cut short) and where it was raised."""
    where = ""
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        last = frames[-1]
        where = f" at {os.path.basename(last.filename)}:{last.lineno} in {last.name}"
    message = " ".join(str(exc).split())
    if len(message) > 160:
        message = message[:157] + "..."
    return f"{type(exc).__name__}: {message}{where}"


def _read(stream: Any, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = stream.read(size - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def _send(stream: Any, value: Any) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("!I", len(data)) + data)
    stream.flush()


def _main() -> None:  # pragma: no cover - runs in the worker process
    """The worker: answer jobs ``(text, system, limits)`` on stdin until it closes."""
    import resource

    memory = int(sys.argv[1])
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    from .._errors import InputError
    from .room import odds_page

    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing else may write into the answers
    import astragal
    from astragal.systems import get_system

    for name in astragal.system_names():  # imported before the first job's clock starts
        with contextlib.suppress(Exception):
            get_system(name)
    with contextlib.suppress(Exception):
        odds_page("2d6", None, Limits())  # and what the first odds import lazily

    _send(stdout, "ready")
    while True:
        try:
            text, system, limits = pickle.loads(_read(stdin, struct.unpack("!I", _read(stdin, 4))[0]))
        except EOFError:
            return
        start = time.process_time()
        try:
            reply: tuple[str, Any] = ("ok", odds_page(text, system, limits))
        except InputError as exc:
            reply = ("input", (type(exc).__name__, exc.message, exc.text,
                               list(exc.span) if exc.span else None))
        except MemoryError:
            reply = ("memory", None)
        except Exception as exc:  # noqa: BLE001 - any bug: one line back, the worker lives on
            reply = ("crash", short_error(exc))
        try:
            _send(stdout, (*reply, time.process_time() - start))
        except MemoryError:
            _send(stdout, ("memory", None, time.process_time() - start))


class _Worker:
    def __init__(self, memory: int) -> None:
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
               "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH"))
                                             if p)}
        self.process = subprocess.Popen(
            [sys.executable, "-c", "from astragal.web.oddspool import _main; _main()",
             str(memory)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
            close_fds=True)

    def ready(self, seconds: float) -> bool:
        """Wait for the worker to have imported astragal (its start is not a job's time)."""
        assert self.process.stdout is not None
        try:
            return bool(self.ask(None, seconds) == "ready")
        except (EOFError, OSError, pickle.UnpicklingError):
            return False

    def alive(self) -> bool:
        return self.process.poll() is None

    def ask(self, job: Any, seconds: float) -> Any:
        """The worker's answer, or None when it gave none within ``seconds``."""
        assert self.process.stdin is not None and self.process.stdout is not None
        if job is not None:
            _send(self.process.stdin, job)
        # a selector, not select.select: a server holding a thousand connections gives the
        # worker's pipe a descriptor past select's limit of 1024
        with selectors.DefaultSelector() as waiting:
            waiting.register(self.process.stdout, selectors.EVENT_READ)
            if not waiting.select(seconds):
                return None
        size = struct.unpack("!I", _read(self.process.stdout, 4))[0]
        return pickle.loads(_read(self.process.stdout, size))

    def kill(self) -> None:
        with contextlib.suppress(Exception):
            self.process.kill()
            self.process.wait(timeout=5)
        for stream in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(Exception):
                if stream is not None:
                    stream.close()


class OddsPool:
    """``workers`` processes computing odds, each job cut at ``seconds``."""

    def __init__(self, workers: int = 2, seconds: float = 5.0, memory: int = 1 << 30,
                 wait: float = 10.0) -> None:
        self.workers = workers
        self.seconds = seconds
        self.memory = memory
        self.wait = wait
        self._free = threading.BoundedSemaphore(workers)
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()
        self.killed = 0  # workers killed at the cut (for the tests and the figures)

    def run(self, text: str, system: str | None, limits: Limits) -> Outcome | None:
        """The odds of ``text``, or None when no worker was free within ``wait`` seconds."""
        if not self._free.acquire(timeout=self.wait):
            return None
        try:
            with self._lock:
                worker = self._idle.pop() if self._idle else None
            if worker is None or not worker.alive():
                if worker is not None:
                    worker.kill()
                worker = _Worker(self.memory)
                if not worker.ready(STARTUP_SECONDS):
                    worker.kill()
                    log.error("an odds worker did not start within %g s", STARTUP_SECONDS)
                    return Outcome("crash", "the odds worker did not start", 0.0)
            started = time.monotonic()
            try:
                answer = worker.ask((text, system, limits), self.seconds)
                kind, value, cpu = answer if answer is not None else ("overrun", None, 0.0)
            except (EOFError, OSError, pickle.UnpicklingError):  # died: out of memory, killed
                kind, value, cpu = "memory", None, time.monotonic() - started
            if kind == "overrun":
                worker.kill()
                self.killed += 1
                return Outcome("overrun", None, time.monotonic() - started)
            if kind == "memory":
                worker.kill()  # its heap may be fragmented near the cap: start afresh
                return Outcome("memory", None, cpu)
            with self._lock:
                self._idle.append(worker)
            return Outcome(kind, value, cpu)
        finally:
            self._free.release()

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.kill()


_POOL: OddsPool | None = None
_POOL_LOCK = threading.Lock()


def shared_pool(workers: int, seconds: float, memory: int, wait: float) -> OddsPool:
    """One pool per process and setting (apps and tests in one process share the workers)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None or (_POOL.workers, _POOL.seconds, _POOL.memory, _POOL.wait) != (
                workers, seconds, memory, wait):
            if _POOL is not None:
                _POOL.close()
            _POOL = OddsPool(workers, seconds, memory, wait)
        return _POOL
