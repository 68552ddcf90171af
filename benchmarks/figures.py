"""The headline figures of benchmarks/RESULTS.md, measured again in one dated run:
``python -m benchmarks.figures`` (``make bench``; take ``flock -x /tmp/cpu.lock`` on a shared
machine). Each bench runs in its own process with short arguments; each figure is read from
what the bench printed (the pattern beside it) and is a ratio measured side by side where a
peer or baseline exists (capture vs adbutils and a raw socket, tuned OCR vs RapidOCR's
defaults, cached vs uncached perception, 4 phones vs 1). The table between the
``figures:begin`` / ``figures:end`` markers of RESULTS.md is replaced, with the date, the
commit, the machine and the load average before and after each bench; the benches' whole
output goes to benchmarks/results/figures-<date>.txt. A pattern that finds nothing is a
failed figure ("not measured"), and the exit code says so. ``bench_farm`` needs Debian's
``postgresql`` (``make postgres``); the whole run takes about 10 minutes on 2 cores.

``--only NAME`` runs one bench (a quick look; RESULTS.md is then left alone unless --write).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "RESULTS.md"
BEGIN, END = "<!-- figures:begin (benchmarks/figures.py writes this part) -->", "<!-- figures:end -->"


@dataclass(frozen=True)
class Figure:
    label: str
    pattern: str  # a regex over the bench's output; its groups feed ``show`` and ``met``
    show: Callable[[tuple[str, ...]], str]
    goal: str = "—"
    met: Callable[[tuple[str, ...]], bool] | None = None


@dataclass(frozen=True)
class Bench:
    name: str
    args: tuple[str, ...]
    figures: tuple[Figure, ...]
    timeout_s: float = 900


def f(x: str) -> float:
    return float(x.replace(",", ""))


BENCHES = [
    Bench("bench_capture", ("--repeat", "20"), (
        Figure("capture, 1080x2400 RGB: ours / adbutils `screenshot()` / raw socket (medians of 20)",
               r"capture\s+ours.*?([\d.]+) ms\n.*?adbutils.*?([\d.]+) ms\n.*?raw socket.*?([\d.]+) ms",
               lambda g: f"{g[0]} / {g[1]} / {g[2]} ms"),
        Figure("capture: adbutils / ours", r"adbutils / ours\s+=\s+([\d.]+)x", lambda g: f"**{g[0]}x**",
               "≥ 3x", lambda g: f(g[0]) >= 3),
        Figure("capture: ours / raw socket", r"ours / raw socket =\s+([\d.]+)x", lambda g: f"**{g[0]}x**",
               "≤ 2x", lambda g: f(g[0]) <= 2),
        Figure("tap: adbutils `click` / ours `tap`", r"adbutils click / ours tap =\s+([\d.]+)x", lambda g: f"{g[0]}x"),
    )),
    Bench("bench_sim_render", (), (
        Figure("simulated phone, changed screen render (worst app)", r"changed-screen render: worst ([\d.]+) ms",
               lambda g: f"{g[0]} ms", "≤ 100 ms", lambda g: f(g[0]) <= 100),
    )),
    Bench("bench_perception", ("--part", "sim"), (
        Figure("perception, simulated text targets, tap verified by position",
               r"simulated text targets: (\d+)/(\d+) = ([\d.]+)%", lambda g: f"**{g[0]}/{g[1]} = {g[2]}%**",
               "≥ 99%", lambda g: f(g[2]) >= 99),
        Figure("perception, simulated icon targets at the right place",
               r"simulated icon targets \([^)]*\): found at the right place (\d+)/(\d+) = ([\d.]+)%",
               lambda g: f"**{g[0]}/{g[1]} = {g[2]}%**", "≥ 80%", lambda g: f(g[2]) >= 80),
    )),
    Bench("bench_perception", ("--part", "speed", "--repeat", "5"), (
        Figure("perception, full pass on 1080x2400 (median of 5)", r"full perception .*?: ([\d.]+) s",
               lambda g: f"**{g[0]} s**", "≤ 1.0 s", lambda g: f(g[0]) <= 1.0),
        Figure("perception: uncached / cached frame", r"cached frame .*?: ([\d.]+) ms = (\d+)x faster",
               lambda g: f"{g[1]}x ({g[0]} ms cached)"),
        Figure("OCR: RapidOCR defaults / our tuned settings", r"RapidOCR defaults ([\d.]+) s vs tuned ([\d.]+) s",
               lambda g: f"{f(g[0]) / f(g[1]):.2f}x ({g[0]} s vs {g[1]} s)"),
    )),
    Bench("bench_real_text", ("--part", "accuracy", "--baseline", "none"), (
        Figure("real screens (Rico, 212 text targets): right tap or among candidates, verified by position",
               r"right or among candidates (\d+)/(\d+) = ([\d.]+)% \(single tap right (\d+), candidates (\d+), "
               r"WRONG (\d+)", lambda g: f"**{g[0]}/{g[1]} = {g[2]}%** ({g[3]} taps, {g[4]} candidates)",
               "≥ 97%", lambda g: f(g[2]) >= 97),
        Figure("real screens: wrong taps or wrong candidates", r"WRONG (\d+), not found (\d+)\)",
               lambda g: f"**{g[0]}** (not found {g[1]})", "0", lambda g: g[0] == "0"),
        Figure("real screens: texts absent from the screen refused", r"absent targets refused: (\d+)/(\d+)",
               lambda g: f"{g[0]}/{g[1]}", "all", lambda g: g[0] == g[1]),
    ), timeout_s=1200),
    Bench("bench_real_icons", ("--backend", "cpu", "--tree"), (
        Figure("real screens (Rico icons), CPU backends: right tap", r"right tap (\d+)/(\d+) = ([\d.]+)%",
               lambda g: f"**{g[0]}/{g[1]} = {g[2]}%**", "≥ 55%", lambda g: f(g[2]) >= 55),
        Figure("real screens (Rico icons): right icon reached (tap or candidates)",
               r"right icon reached \(tap or among candidates\) (\d+)/(\d+) = ([\d.]+)%",
               lambda g: f"{g[0]}/{g[1]} = {g[2]}%", "≥ 85%", lambda g: f(g[2]) >= 85),
        Figure("real screens (Rico icons): wrong taps", r"wrong tap (\d+)/(\d+) = ([\d.]+)%",
               lambda g: f"{g[0]}/{g[1]} = {g[2]}%", "≤ 2%", lambda g: f(g[2]) <= 2),
        Figure("real screens (Rico icons), CPU + the screens' own hierarchies: right tap / wrong taps",
               r"accessibility tree.*?right tap (\d+)/(\d+) = ([\d.]+)%.*?wrong tap (\d+)/",
               lambda g: f"{g[0]}/{g[1]} = {g[2]}% / {g[3]} wrong", "—"),
    ), timeout_s=1200),
    Bench("bench_app_resolution", (), (
        Figure("Open App without the screen: android_world's 57 apps by their first name (alias table + heuristic)",
               r"first name of each app: (\d+)/(\d+) = ([\d.]+)% \(wrong (\d+)",
               lambda g: f"**{g[0]}/{g[1]} = {g[2]}%** (wrong {g[3]})", "≥ 90%, 0 wrong",
               lambda g: f(g[2]) >= 90 and g[3] == "0"),
    )),
    Bench("bench_dialects", ("--drifts", "3"), (
        Figure("grounded taps, 3% vertical drift, worst of the 5 dialect set-ups: as given / snapped per tap / "
               "snapped with the learned drift",
               r"worst dialect at 3% down: as given ([\d.]+)% / snapped per tap ([\d.]+)% / "
               r"snapped with the learned drift ([\d.]+)%",
               lambda g: f"{g[0]}% / {g[1]}% / **{g[2]}%**", "≥ 98% (learned)", lambda g: f(g[2]) >= 98),
        Figure("grounded taps, 3% drift + 1% noise, worst dialect: as given / per tap / learned",
               r"worst dialect at 3% down \+ noise 1%: as given ([\d.]+)% / snapped per tap ([\d.]+)% / "
               r"snapped with the learned drift ([\d.]+)%",
               lambda g: f"{g[0]}% / {g[1]}% / {g[2]}%"),
    )),
    Bench("bench_farm", ("--phases", "farm12,farm1"), (
        Figure("farm on PostgreSQL (needs Debian's postgresql): tasks/min, 3 hosts x 4 phones / 1 phone",
               r"farm 3x4 \(Postgres\): \d+ tasks on 12 phones, ([\d.]+) tasks/min.*?"
               r"farm 1x1 \(Postgres\): \d+ tasks on 1 phones, ([\d.]+) tasks/min",
               lambda g: f"{g[0]} / {g[1]}"),
        Figure("farm: 12 phones vs 1 (with 50 clients polling)",
               r"farm scaling, 12 phones vs 1: ([\d.]+)x \(ideal 12x; goal >= 10x\); with the pollers ([\d.]+)x",
               lambda g: f"**{g[0]}x** ({g[1]}x)", "≥ 10x", lambda g: f(g[0]) >= 10),
    ), timeout_s=600),
    Bench("bench_data_engine", (), (
        Figure("data engine: verified runs/hour of the 30 families' reference solutions, 1 phone / 4 phones",
               r"1 phone\(s\): (\d+) runs in [\d.]+ s, (\d+) verified.*?(\d+) verified runs/hour.*?"
               r"4 phone\(s\): \d+ runs in [\d.]+ s, (\d+) verified.*?(\d+) verified runs/hour",
               lambda g: f"{g[2]} / {g[4]} ({g[1]}/{g[0]} and {g[3]}/{g[0]} verified)", "all verified",
               lambda g: g[1] == g[0] and g[3] == g[0]),
        Figure("data engine: 4 phones vs 1", r"speed-up 4 phones vs 1: ([\d.]+)x", lambda g: f"**{g[0]}x**"),
    )),
    Bench("bench_session_close", ("--steps", "100", "--rounds", "3"), (
        Figure("ending an MCP session of 100 steps, `close()` (wait for the images, write the report): writer "
               "alone / with `embed_later` (median of 3)",
               r"writer alone\s*: close ([\d.]+) s.*?with embed_later\s*: close ([\d.]+) s",
               lambda g: f"{g[0]} s / **{g[1]} s**", "< 2 s (the SDK's grace)", lambda g: f(g[1]) < 2),
    )),
    Bench("bench_step_overhead", (), (
        Figure("step overhead (scripted run, settle included), median of all steps / steps with OCR",
               r"median overhead per step: (\d+) ms; steps with OCR: (\d+) ms",
               lambda g: f"**{g[0]} ms** / {g[1]} ms", "≤ 1.5 s", lambda g: f(g[1]) <= 1500),
    )),
    Bench("bench_prompt_growth", (), (
        Figure("prompt bytes over 20 steps: last 5 / first 5 requests", r"growth, mean of the last \d+ requests / "
               r"first \d+: ours ([\d.]+)x bytes", lambda g: f"**{g[0]}x**", "flat"),
        Figure("prompt bytes, whole run: ours vs re-send-all design", r"whole run: ours ([\d.]+) MB, reference ([\d.]+) MB",
               lambda g: f"{g[0]} MB vs {g[1]} MB ({f(g[1]) / f(g[0]):.1f}x less)"),
    )),
    Bench("bench_server", (), (
        Figure("server: tasks/min with 4 phones vs 1 (0.5 s model latency)", r"scaling 4 phones vs 1: ([\d.]+)x",
               lambda g: f"**{g[0]}x** (ideal 4.00x)", "≥ 2.5x", lambda g: f(g[0]) >= 2.5),
    )),
]


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU"


def load() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def run(bench: Bench, log: list[str]) -> tuple[list[str], bool, str]:
    before = load()
    started = time.perf_counter()
    command = [sys.executable, str(HERE / f"{bench.name}.py"), *bench.args]
    try:
        proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=bench.timeout_s)
        out, code = proc.stdout + proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as exc:
        partial = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else exc.stdout or ""
        out, code = f"{partial}\nTIMEOUT after {bench.timeout_s:.0f} s", -1
    seconds = time.perf_counter() - started
    where = f"`{bench.name} {' '.join(bench.args)}`".replace(" `", "`")
    log += [f"=== {where} (exit {code}, {seconds:.0f} s, load {before} -> {load()})", out]
    rows, ok = [], code == 0
    for fig in bench.figures:
        match = re.search(fig.pattern, out, re.S)
        if not match:
            rows.append(f"| {fig.label} ({where}) | not measured (exit {code}; pattern not in its output) | {fig.goal} | no |")
            ok = False
            continue
        groups = match.groups()
        met = "—" if fig.met is None else ("yes" if fig.met(groups) else "**no**")
        rows.append(f"| {fig.label} ({where}) | {fig.show(groups)} | {fig.goal} | {met} |")
    print(f"{bench.name} {' '.join(bench.args)}: exit {code}, {seconds:.0f} s", flush=True)
    return rows, ok, f"{bench.name} {before} -> {load()}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run the benches whose name contains this")
    parser.add_argument("--write", action="store_true", help="with --only: still write RESULTS.md")
    args = parser.parse_args()
    chosen = [b for b in BENCHES if not args.only or args.only in b.name]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip() or "unknown"
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                           capture_output=True, text=True).stdout.strip()
    start = dt.datetime.now(dt.timezone.utc)
    load_start = load()
    log: list[str] = []
    rows: list[str] = []
    loads: list[str] = []
    ok = True
    for bench in chosen:
        got, fine, seen = run(bench, log)
        rows += got
        loads.append(seen)
        ok = ok and fine
    end = dt.datetime.now(dt.timezone.utc)
    out_dir = HERE / "results"
    out_dir.mkdir(exist_ok=True)
    raw = out_dir / f"figures-{start:%Y%m%d-%H%M%S}.txt"
    raw.write_text("\n".join(log), encoding="utf-8")
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    block = "\n".join([
        BEGIN,
        "## Figures vs goals",
        "",
        f"Measured by `python -m benchmarks.figures` (`make bench`) in one run, "
        f"{start:%Y-%m-%d %H:%M}–{end:%H:%M} UTC, at commit `{commit}`"
        + (" with uncommitted edits of a shared working tree" if dirty else "") + ".",
        f"Machine: {os.cpu_count()} CPU cores ({cpu_model()}), {memory:.0f} GiB RAM, no GPU; "
        f"Python {sys.version.split()[0]}. Load average (1 / 5 / 15 min) at the start {load_start}; "
        "per bench, before -> after: " + "; ".join(loads) + ".",
        "Each row names the bench and its arguments; ratios are measured side by side in the same "
        "process. One run, not an average: on a shared 2-core machine read the times as orders of "
        "magnitude. The plan cache (cached vs uncached, 33 tasks: about 20 minutes) has its own "
        "section below, with its own runs; the farm's and the other benches' sections say more.",
        "",
        "| Figure (bench) | Measured | Goal | Met? |",
        "| --- | --- | --- | --- |",
        *rows,
        "",
        END,
    ])
    print(block)
    if args.only and not args.write:
        print(f"(--only: RESULTS.md left alone; raw output in {raw})")
        return 0 if ok else 1
    text = RESULTS.read_text(encoding="utf-8")
    if BEGIN in text and END in text:
        text = text[: text.index(BEGIN)] + block + text[text.index(END) + len(END):]
    else:
        raise SystemExit(f"{RESULTS}: no {BEGIN} … {END} markers")
    RESULTS.write_text(text, encoding="utf-8")
    print(f"RESULTS.md: the figures table rewritten; raw output in {raw}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
