"""Run every ``benchmarks/bench_*.py`` in turn: ``python -m benchmarks [NAME_FILTER]``.

Each bench is its own process (a crash or a leaked thread stays there); the exit code is
non-zero when any bench failed. The adb server, simulated phones and round-robin timing
they share are in ``benchmarks/rig.py``.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    wanted = argv[0] if argv else ""
    benches = sorted(p for p in HERE.glob("bench_*.py") if wanted in p.stem)
    if not benches:
        print(f"no benchmarks/bench_*.py matches {wanted!r}")
        return 2
    failed = []
    for path in benches:
        print(f"=== {path.stem} ===", flush=True)
        started = time.perf_counter()
        proc = subprocess.run([sys.executable, str(path)], cwd=HERE.parent, check=False)
        print(f"=== {path.stem}: exit {proc.returncode} in {time.perf_counter() - started:.1f} s ===\n", flush=True)
        if proc.returncode != 0:
            failed.append(path.stem)
    if failed:
        print("failed:", ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
