"""When speculative perception may run: on CPU the machine has to spare, one at a time.

While the model thinks, the agent OCRs the screen it sent (``TimedLocator.prefetch``) so
that a ``Click text`` finds its text ready. That OCR is speculation: the model may answer
with a tap, a swipe or Stop, and then nobody reads it. On a laptop with one phone it costs
nothing that anyone waits for. On a host that runs several phones it competes for the same
cores with the runs' own work (screenshots, encodes, the steps the model did ask for), and
an OCR takes every core ONNX Runtime is given: on a 2-core machine standing for three farm
hosts of four phones each, speculation that nobody read was the largest cost of the farm
(7.9x the 1-phone rate with it, 9.9x with it off; ``benchmarks/bench_farm.py --set
agent.prefetch_perception=false``; benchmarks/RESULTS.md).

So speculation asks the ``SpeculationGate`` first:

- **a core or two per run**: the process's planned runs at this moment (``running()``) may
  be at most half its cores (at least one run): an OCR keeps about two cores busy, so a
  laptop or a host with cores to spare speculates, and a 2-core host driving four phones
  does not (``max_runs``);
- **the machine's idle share** over the moments just before (the prefetch's own delay: a
  sample when it is scheduled, one when it would start) must be at least
  ``agent.prefetch_min_idle``; on Linux from ``/proc/stat`` (man 5 proc: the first ``cpu``
  line, idle and iowait among the times of all cores), elsewhere from the load average,
  and where neither exists it always may;
- **one speculative OCR at a time per process**: a second one while one runs is skipped
  (each OCR already uses every core it is given; two would only share them).

A skipped speculation costs only latency: the lookup that needs the text OCRs it then.

May import: the standard library.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

__all__ = ["CpuSample", "SpeculationGate", "cpu_sample", "idle_share", "usable_cores"]

log = logging.getLogger(__name__)



class CpuSample(NamedTuple):
    """/proc/stat's idle and total ticks of all cores together; where there is no /proc,
    the 1-minute load average instead (``load``)."""

    idle: float = 0.0
    total: float = 0.0
    load: float | None = None

_PROC_STAT = Path("/proc/stat")


def _from_proc_stat(path: Path) -> CpuSample | None:
    try:
        with path.open("rb") as stat:
            first = stat.readline().split()
    except OSError:
        return None
    # cpu  user nice system idle iowait irq softirq steal guest guest_nice (guest is counted in user)
    if len(first) < 5 or first[0] != b"cpu":
        return None
    try:
        ticks = [int(value) for value in first[1:9]]
    except ValueError:
        return None
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)
    return CpuSample(float(idle), float(sum(ticks)))


def cpu_sample(path: Path = _PROC_STAT) -> CpuSample | None:
    """A sample to compare with a later one (``idle_share``); None where neither /proc/stat
    nor a load average can be read (Windows)."""
    sample = _from_proc_stat(path)
    if sample is not None:
        return sample
    try:
        return CpuSample(load=os.getloadavg()[0])
    except (AttributeError, OSError):
        return None


def idle_share(before: CpuSample | None, after: CpuSample | None) -> float | None:
    """The share of the machine's CPU time that was idle between two samples (0..1); None
    when it cannot be told (a missing sample, or no tick between them)."""
    if after is not None and after.load is not None:  # no /proc: the load average, per core
        return max(0.0, 1.0 - after.load / (os.cpu_count() or 1))
    if before is None or after is None or before.load is not None:
        return None
    idle, total = after.idle - before.idle, after.total - before.total
    if total <= 0:
        return None
    return min(1.0, max(0.0, idle / total))


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system tells it)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class SpeculationGate:
    """Says whether a speculative OCR may start now (module docstring); shared by every run
    of the process (``shared()``)."""

    _shared: SpeculationGate | None = None
    _shared_lock = threading.Lock()

    def __init__(self, sample: Callable[[], CpuSample | None] = cpu_sample, *, max_runs: int | None = None) -> None:
        self._sample = sample
        self._running = threading.Semaphore(1)
        self._lock = threading.Lock()
        self._runs = 0
        self.max_runs = max_runs if max_runs is not None else max(1, usable_cores() // 2)
        self.allowed = 0
        self.skipped_busy = 0
        self.skipped_running = 0
        self.skipped_crowded = 0

    @contextmanager
    def running(self) -> Iterator[None]:
        """Around a planned run: it counts among the process's runs while it lasts."""
        with self._lock:
            self._runs += 1
        try:
            yield
        finally:
            with self._lock:
                self._runs -= 1

    @classmethod
    def shared(cls) -> SpeculationGate:
        with cls._shared_lock:
            if cls._shared is None:
                cls._shared = cls()
            return cls._shared

    def mark(self) -> CpuSample | None:
        """A sample now, for ``enter`` to measure the idle share since."""
        return self._sample()

    def enter(self, since: CpuSample | None, min_idle: float) -> bool:
        """True (call ``leave`` when done) when the machine was idle enough since ``since``
        and no other speculation runs in this process."""
        with self._lock:
            crowded = self._runs > self.max_runs
        if crowded:
            self.skipped_crowded += 1
            return False
        if min_idle > 0:
            share = idle_share(since, self._sample())
            if share is not None and share < min_idle:
                self.skipped_busy += 1
                log.debug("speculative OCR skipped: %.0f%% of the CPU idle, under %.0f%%", share * 100, min_idle * 100)
                return False
        if not self._running.acquire(blocking=False):
            self.skipped_running += 1
            return False
        self.allowed += 1
        return True

    def leave(self) -> None:
        self._running.release()
