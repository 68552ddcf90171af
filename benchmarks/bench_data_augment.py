"""Augmented data on simulated phones: every family's reference solution as every variant
(light/dark x the phone's size and 720x1600 x two phone profiles), verified by the state
validator and exported in every planner dialect; prints verified runs per variant and the
dataset's samples per dialect, variant and split (the card), with the load average.

    .venv/bin/python -m benchmarks.bench_data_augment [--per-family 1] [--sizes 720x1600] [--family A,B] [--out DIR]

Two simulated phones: ``pixel7-14`` (1080x2400) and ``galaxy-s22-13`` (1080x2316 by its One UI
resolution override), each instance pinned to each. Seeds 100.. (no test's seed).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path

from benchmarks.rig import ADB_PORT, private_adb_server, served_phones

PROFILES = ("pixel7-14", "galaxy-s22-13")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--per-family", type=int, default=1)
    parser.add_argument("--family", default="", help="comma-separated family names (default: all)")
    parser.add_argument("--sizes", default="720x1600")
    parser.add_argument("--out", type=Path, help="keep the run and the dataset here (default: a temporary folder)")
    args = parser.parse_args()
    from eval.data_engine.export import export_runs
    from eval.data_engine.variants import expand, parse_sizes, phone_variants, task_for_id, variant_of
    from eval.families import sample_instances
    from eval.mobile_eval.records import load_results
    from eval.mobile_eval.runner import EvalConfig, SuiteRunner
    from mobile_agent.device import open_device
    from mobile_agent.settings import AdbSettings, AgentSettings, PerceptionSettings, Settings

    print(f"load average before: {os.getloadavg()}", flush=True)
    with private_adb_server(), tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        folder = args.out or Path(tmp)
        serials = [stack.enter_context(served_phones(1, profile=p))[0][0] for p in PROFILES]
        devices = [open_device(AdbSettings(server_port=ADB_PORT), s) for s in serials]
        phones = [(s, d.shell(["getprop", "ro.product.model"]).strip()) for s, d in zip(serials, devices, strict=True)]
        tasks, pinned = expand(sample_instances(families=[f for f in args.family.split(",") if f] or None,
                                            seeds=range(100, 100 + args.per_family)),
                               ["themes", "sizes", "profiles"], sizes=parse_sizes(args.sizes), phones=phones)
        phone_names = [(v.device, v.name) for v in phone_variants(phones)]
        settings = Settings(adb=AdbSettings(server_port=ADB_PORT, serial=serials[0]),
                            agent=AgentSettings(output_dir=folder / "runs", settle_timeout_s=1.5, settle_interval_s=0.1),
                            perception=PerceptionSettings(detector="proposals", ranker="heuristic"))
        started = time.perf_counter()
        records = SuiteRunner(settings, devices, EvalConfig(output_dir=folder, mode="reference")).run(tasks, pinned)
        elapsed = time.perf_counter() - started
        load = os.getloadavg()
        names = [n for _, n in phone_names]
        runs: Counter[str] = Counter()
        verified: Counter[str] = Counter()
        for r in records:
            variant = variant_of(r.task_id)
            theme = next((t for t in ("light", "dark") if variant.startswith(t)), "own theme")
            size = next((s for s in args.sizes.split(",") if s in variant), "own size")
            phone = next((n for n in names if variant.endswith(n)), "?")
            for part in (theme, size, phone):
                runs[part] += 1
                verified[part] += r.success
            if not r.success:
                print(f"  not verified: {r.task_id}: {[x for x in r.reasons if x.startswith('✗')][:1]}")
        print(f"{len(records)} runs on {len(devices)} phones in {elapsed:.0f} s, {sum(r.success for r in records)} "
              f"verified; load average after {load[0]:.2f}")
        print("verified per theme, size and phone: " + ", ".join(f"{k} {verified[k]}/{runs[k]}" for k in sorted(runs)))
        results = load_results(folder / "results.jsonl")
        summary = export_runs(results, {r.task_id: t for r in results if (t := task_for_id(r.task_id))}, folder / "ds")
        print(summary.card())


if __name__ == "__main__":
    main()
