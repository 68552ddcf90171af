"""How long ending a long trajectory takes: the time an MCP session's server needs after
its client closes stdin (the SDK's stdio client waits 2 s, then SIGTERM, then SIGKILL 2 s
later: ``mcp.client.stdio.PROCESS_TERMINATION_TIMEOUT``).

A ``TrajectoryWriter`` gets N steps of real simulated-phone screens (``simphone.Phone``,
1080x2400 PNG, the home screen and Settings in turn), then ``close()`` is timed (wait
for the images, render and write ``report.html``) two ways: the writer alone, and with
``TrajectoryWriter.embed_later`` called after each step (what an MCP session's trajectory
does). When this bench was written, the writer alone embedded every image at the end (one
decode per step: 3.7 s for 100 steps, past the SDK's 2 s); since ``d592e87`` the writer makes
each report image on its image thread as the file is written, so both ways measure the same
close and ``embed_later`` finds its images already made.

Run: ``python benchmarks/bench_session_close.py [--steps N] [--rounds R]`` (prints the load average).
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mobile_agent.agent.records import StepRecord  # noqa: E402
from mobile_agent.agent.redact import Redactor  # noqa: E402
from mobile_agent.agent.trajectory import TrajectoryWriter  # noqa: E402
from simphone import Phone  # noqa: E402

GRACE_S = 2.0  # mcp.client.stdio.PROCESS_TERMINATION_TIMEOUT


def _screens() -> list[np.ndarray]:
    phone = Phone()
    frames = [np.asarray(Image.open(io.BytesIO(phone.screencap_png())).convert("RGB"))]
    phone.tap(*_center(phone, "Settings"))
    frames.append(np.asarray(Image.open(io.BytesIO(phone.screencap_png())).convert("RGB")))
    return frames


def _center(phone: Phone, text: str) -> tuple[int, int]:
    for element in phone.ground_truth():
        if text in (element.get("text"), element.get("desc")):
            left, top, right, bottom = element["box"]
            return (left + right) // 2, (top + bottom) // 2
    raise LookupError(text)


def _close_s(root: Path, frames: list[np.ndarray], steps: int, *, as_they_come: bool) -> float:
    writer = TrajectoryWriter(root, f"bench{time.monotonic_ns()}", Redactor([]), {"instruction": "bench", "mode": "mcp"})
    for index in range(1, steps + 1):
        frame = frames[index % len(frames)]
        step = StepRecord(index=index, screenshot=writer.save_screenshot(index, frame), action_text="Back", ok=True,
                          tap_point=(540, 1200))
        annotated = writer.save_annotated(step, frame)
        writer.write_step(StepRecord(**{**step.__dict__, "annotated": annotated}))
        writer.flush()  # as the session does after each step
        if as_they_come:
            writer.embed_later(annotated or step.screenshot)
        time.sleep(0.1)  # a client thinks between calls
    start = time.perf_counter()
    writer.close()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    frames = _screens()
    with tempfile.TemporaryDirectory() as tmp:
        for label, ahead in (("writer alone", False), ("with embed_later", True)):
            times = [_close_s(Path(tmp), frames, args.steps, as_they_come=ahead) for _ in range(args.rounds)]
            median = statistics.median(times)
            print(f"{args.steps} steps, {label:22}: close {median:.2f} s median of {args.rounds} "
                  f"({', '.join(f'{t:.2f}' for t in times)}); ratio to the {GRACE_S:.0f} s grace {median / GRACE_S:.2f}")
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
