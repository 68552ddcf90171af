"""Run a Python module under cProfile in every thread, and write the merged profile at exit.

``python benchmarks/profile_process.py OUT.prof MODULE [ARGS...]``: the bench's ``--profile``
wraps the farm's processes in it to see where their CPU goes (py-spy is not installed here;
cProfile alone sees only the thread that enabled it, so each new thread gets its own profiler
through ``threading.setprofile``, and they are summed into one ``pstats`` file at exit). The
timer is ``time.thread_time``: the figures are CPU seconds, not wall time.
"""

from __future__ import annotations

import atexit
import cProfile
import pstats
import runpy
import signal
import sys
import threading
import time

_profiles: list[cProfile.Profile] = []
_lock = threading.Lock()


def _start_in_thread(*_: object) -> None:
    profile = cProfile.Profile(time.thread_time)  # CPU seconds of this thread, not wall time
    with _lock:
        _profiles.append(profile)
    profile.enable()  # replaces this hook for the rest of the thread


def _dump(path: str) -> None:
    with _lock:
        profiles = list(_profiles)
    stats: pstats.Stats | None = None
    for profile in profiles:
        try:
            profile.disable()
        except Exception:
            pass
        try:
            stats = pstats.Stats(profile) if stats is None else (stats.add(profile) or stats)
        except TypeError:  # a thread's profiler that recorded nothing
            continue
    if stats is not None:
        stats.dump_stats(path)


def main() -> None:
    out, module, *args = sys.argv[1:]
    atexit.register(_dump, out)
    # a plain exit on SIGTERM, so that atexit writes the file (uvicorn re-raises the signal it caught)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    threading.setprofile(_start_in_thread)
    _start_in_thread()
    sys.argv = [module, *args]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
