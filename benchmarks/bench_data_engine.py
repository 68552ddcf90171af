"""Data engine throughput: verified runs per hour of the task families' reference solutions
on N simulated phones (one runner thread per phone, the real adb server, OCR perception of a
default CPU-only install), 1 phone vs N in one run; plus instances per family and per app.

    .venv/bin/python -m benchmarks.bench_data_engine [--phones 4] [--per-family 1]

Runs every family once per seed (seeds 100.. so no test's seed repeats), exports them with
the data engine, and prints runs/hour, the share verified, and the load average.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections import Counter
from pathlib import Path

from benchmarks.rig import ADB_PORT, private_adb_server, served_phones


def _run(n_phones: int, tasks: list, folder: Path) -> tuple[float, int, int]:
    from eval.mobile_eval.runner import EvalConfig, SuiteRunner
    from mobile_agent.device import open_device
    from mobile_agent.settings import AdbSettings, AgentSettings, PerceptionSettings, Settings

    with served_phones(n_phones) as (serials, _phones):
        settings = Settings(adb=AdbSettings(server_port=ADB_PORT, serial=serials[0]),
                            agent=AgentSettings(output_dir=folder / "runs", settle_timeout_s=1.5, settle_interval_s=0.1),
                            perception=PerceptionSettings(detector="proposals", ranker="heuristic"))
        devices = [open_device(AdbSettings(server_port=ADB_PORT), s) for s in serials]
        started = time.perf_counter()
        records = SuiteRunner(settings, devices, EvalConfig(output_dir=folder, mode="reference")).run(tasks)
        elapsed = time.perf_counter() - started
    for r in records:
        if not r.success:
            print(f"  not verified: {r.task_id}: {[x for x in r.reasons if x.startswith('✗')][:2]}")
    return elapsed, len(records), sum(r.success for r in records)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--phones", type=int, default=4)
    parser.add_argument("--per-family", type=int, default=1)
    args = parser.parse_args()
    from eval.data_engine.export import export_runs
    from eval.families import FAMILIES, distinct_instances, sample_instances
    from eval.families.catalog import instance_by_id
    from eval.mobile_eval.records import load_results

    per_app: Counter[str] = Counter()
    for family in FAMILIES.values():
        for app in family.apps:
            per_app[app] += distinct_instances(family, range(200))
    print(f"{len(FAMILIES)} families; distinct instances in seeds 0-199 per app: {dict(sorted(per_app.items()))}")
    tasks = sample_instances(seeds=range(100, 100 + args.per_family))
    print(f"load average before: {os.getloadavg()}")
    with private_adb_server(), tempfile.TemporaryDirectory() as tmp:
        rows = []
        for n in (1, args.phones):
            folder = Path(tmp) / f"p{n}"
            elapsed, runs, verified = _run(n, tasks, folder)
            load = os.getloadavg()
            records = load_results(folder / "results.jsonl")
            summary = export_runs(records, {r.task_id: instance_by_id(r.task_id) for r in records}, folder / "ds")
            rows.append((n, elapsed, runs, verified, load[0], summary.exported))
            print(f"{n} phone(s): {runs} runs in {elapsed:.1f} s, {verified} verified, {summary.exported} exported, "
                  f"{verified / elapsed * 3600:.0f} verified runs/hour; load average {load[0]:.2f}", flush=True)
        (n1, t1, *_), (nn, tn, *_) = rows
        print(f"speed-up {nn} phones vs 1: {t1 / tn:.2f}x")


if __name__ == "__main__":
    main()
