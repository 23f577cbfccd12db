"""The operating system's randomness: one shared block, dealt once across threads, fresh after fork."""

from __future__ import annotations

import os
import threading

import pytest

import astragal
from astragal import _rng
from tests.stats import assert_matches


def test_rolls_share_one_block_of_os_randomness(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = os.urandom

    def counted(n: int) -> bytes:
        calls.append(n)
        return real(n)

    monkeypatch.setattr(_rng.os, "urandom", counted)
    _rng._forget_buffer()
    for _ in range(200):  # 200 rolls of 1d20+5: at most a byte or two each
        astragal.roll("1d20+5")
    assert calls[:1] == [256] and len(calls) <= 2, calls  # a small first block, then twice that
    for _ in range(5000):
        astragal.roll("1d20+5")
    # the blocks grow to 4 KiB and stay there: a few system calls for ~5,000 bytes
    assert calls[:5] == [256, 512, 1024, 2048, 4096] and set(calls[5:]) <= {4096}, calls
    assert len(calls) <= 6, calls
    _rng._forget_buffer()


def test_threads_are_dealt_distinct_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    # a counting "randomness" makes every byte dealt visible: none may be dealt twice
    counter = iter(range(1 << 30))

    def numbered(n: int) -> bytes:
        return b"".join(next(counter).to_bytes(4, "little") for _ in range(n // 4))

    monkeypatch.setattr(_rng.os, "urandom", numbered)
    _rng._forget_buffer()
    seen: list[bytes] = []
    lock = threading.Lock()

    def work() -> None:
        mine = [_rng._random_bytes(4) for _ in range(3000)]
        with lock:
            seen.extend(mine)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen) == 24000 and len(set(seen)) == 24000
    _rng._forget_buffer()


def test_faces_from_many_threads_stay_uniform() -> None:
    faces: list[int] = []
    lock = threading.Lock()

    def work() -> None:
        source = astragal.SystemSource()
        mine = [source.face(6) for _ in range(5000)]
        with lock:
            faces.extend(mine)

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert_matches(faces, {f: 1 / 6 for f in range(1, 7)})


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_does_not_repeat_its_parents_faces() -> None:
    source = astragal.SystemSource()
    source.face(1_000_000)  # the parent now holds a block it has barely used
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its next faces
        try:
            os.write(write, ",".join(str(source.face(1_000_000)) for _ in range(20)).encode())
        finally:
            os._exit(0)
    os.close(write)
    child = os.read(read, 1 << 16).decode().split(",")
    os.close(read)
    os.waitpid(pid, 0)
    parent = [str(source.face(1_000_000)) for _ in range(20)]
    assert len(child) == 20 and child != parent
    # with 10^6 faces, even one shared face in the same place is a one-in-50,000 event
    assert sum(a == b for a, b in zip(child, parent)) <= 1
