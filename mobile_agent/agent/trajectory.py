"""The trajectory folder of one run.

Layout of ``<output_dir>/<UTC timestamp>-<run id>/``::

    trajectory.jsonl      line 1: {"type": "run", "schema_version": 1, instruction, model, device, settings}
                          then one {"type": "step", ...StepRecord} line per step
                          last:   {"type": "result", status, reason, error, usage, ...}
    step-001.png          the raw screenshot the step saw (screen pixels)
    step-001-marked.jpg   the same with the tap point / swipe arrow / candidate boxes
    final.png             the screen after the last action, when no step shows it
    report.html           a self-contained replay page

Every line and the report go through the run's ``Redactor``; with secrets configured,
every frame goes through a ``ScreenSecretMasker`` (``mask``) before it is written. Images are encoded on one
background thread so that the step loop does not wait for PNG compression; ``close``
waits for them.

May import: the standard library, numpy, Pillow, ``mobile_agent.errors``, ``mobile_agent.agent``'s own modules.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from mobile_agent.agent.annotate import annotate
from mobile_agent.agent.records import SCHEMA_VERSION, RunResult, StepRecord
from mobile_agent.agent.redact import Redactor
from mobile_agent.agent.report import embed_image, embed_pil, render_report
from mobile_agent.errors import ConfigError, DeviceError
from mobile_agent.operations.context import AgentDevice
from mobile_agent.planner.images import rgb_image
from mobile_agent.settings import Settings

__all__ = ["TrajectoryWriter", "load_trajectory", "run_header", "write_report"]

log = logging.getLogger(__name__)

# the report's copy of each image is made as the image is written (from the frame in memory,
# on the image thread, while the model thinks) instead of decoded back from disk at the end;
# a long run keeps at most this many in memory, and the report reads the rest from their files
_EMBEDDED_MAX = 200


def run_header(
    settings: Settings, *, run_id: str, instruction: str, mode: str, device: AgentDevice | None, started_at: float
) -> dict[str, Any]:
    """The trajectory's first line: the run, its device and the settings that shaped it."""
    planner = settings.planner
    agent = settings.agent
    info: dict[str, Any] = {"serial": (device.serial if device is not None else None) or settings.adb.serial}
    if device is not None:
        try:
            screen = device.screen_info()
            info.update(width=screen.width, height=screen.height, density=screen.density)
        except DeviceError as exc:  # the first step will meet the same error and end the run
            info["error"] = exc.message
    return {
        "run_id": run_id,
        "instruction": instruction,
        "mode": mode,
        "model": planner.model if mode == "planned" else None,
        "base_url": planner.base_url if mode == "planned" else None,
        "device": info,
        "started_at": started_at,
        "settings": {
            "agent": {
                "max_steps": agent.max_steps,
                "reflection": agent.reflection,
                "completion_check": agent.completion_check,
                "max_completion_checks": agent.max_completion_checks,
                "max_identical_actions": agent.max_identical_actions,
                "max_consecutive_failures": agent.max_consecutive_failures,
                "change_threshold": agent.change_threshold,
            },
            "planner": {
                "model": planner.model,
                "temperature": planner.temperature,
                "max_tokens": planner.max_tokens,
                "image_long_side": planner.image_long_side,
            },
            "perception": {
                "ocr_backend": settings.perception.ocr_backend,
                "detector": settings.perception.detector,
                "ranker": settings.perception.ranker,
            },
        },
    }


class TrajectoryWriter:
    """Writes one run's folder as the run goes, so that a crash keeps what happened."""

    def __init__(
        self,
        root: Path,
        run_id: str,
        redactor: Redactor,
        header: dict[str, Any],
        *,
        mask: Callable[[np.ndarray], np.ndarray] | None = None,
    ) -> None:
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        self.folder = Path(root) / f"{stamp}-{run_id}"
        try:
            self.folder.mkdir(parents=True, exist_ok=False)
        except OSError as exc:  # the output folder is a setting: say which one is wrong
            raise ConfigError(
                f"cannot create the trajectory folder {self.folder}: {exc.strerror or exc}", path=str(self.folder)
            ) from exc
        self._redact = redactor
        self._mask = mask  # blacks out secrets on screen before a frame is written
        self._header = self._redact({"type": "run", "schema_version": SCHEMA_VERSION, **header})
        self._steps: list[dict[str, Any]] = []
        self._result: dict[str, Any] | None = None
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="trajectory-images")
        self._pending: list[Future[None]] = []
        self._embedded: dict[str, str] = {}  # file name -> data URI (embed_later)
        self._file = (self.folder / "trajectory.jsonl").open("w", encoding="utf-8")
        self._write_line(self._header)

    # -- images ----------------------------------------------------------------------

    def screenshot_name(self, index: int) -> str:
        return f"step-{index:03d}.png"

    def annotated_name(self, index: int) -> str:
        return f"step-{index:03d}-marked.jpg"

    def save_screenshot(self, index: int, pixels: np.ndarray) -> str:
        """Queue the raw frame for writing; returns its path relative to the folder."""
        name = self.screenshot_name(index)
        self._submit(self._write_png, pixels, self.folder / name)
        return name

    def save_final(self, pixels: np.ndarray) -> str:
        """Queue the screen as the run left it (after the last action)."""
        self._submit(self._write_png, pixels, self.folder / "final.png")
        return "final.png"

    def save_annotated(self, record: StepRecord, pixels: np.ndarray) -> str | None:
        """Queue the marked-up frame when the step has something to mark."""
        if record.tap_point is None and record.swipe is None and record.location is None:
            return None
        name = self.annotated_name(record.index)
        self._submit(self._write_annotated, pixels, record, self.folder / name)
        return name

    def _submit(self, fn: Callable[..., None], *args: Any) -> None:
        self._pending.append(self._pool.submit(fn, *args))

    def after_files(self, fn: Callable[..., None], *args: Any) -> None:
        """Run ``fn`` once every image queued so far is on disk (events that name them)."""
        self._submit(fn, *args)

    def embed_later(self, name: str) -> None:
        """Embed the image ``name`` for the report once it is on disk, in the background: a
        long trajectory (an MCP session's) then renders its report in the moment its
        process is given at the end, not one image decode per step."""
        self._submit(self._embed, name)

    def _embed(self, name: str) -> None:
        if name in self._embedded:  # made as it was written
            return
        image = embed_image(self.folder / name)
        if image is not None:
            self._embedded[name] = image

    def _embed_written(self, image: Image.Image, path: Path) -> None:
        if len(self._embedded) < _EMBEDDED_MAX:
            self._embedded[path.name] = embed_pil(image)

    def _masked(self, pixels: np.ndarray) -> np.ndarray:
        return self._mask(pixels) if self._mask is not None else pixels

    def _write_png(self, pixels: np.ndarray, path: Path) -> None:
        # compress_level 1: ~5x faster than the default for a few % more bytes
        image = rgb_image(self._masked(pixels)[:, :, :3])
        image.save(path, format="PNG", compress_level=1)
        self._embed_written(image, path)

    def _write_annotated(self, pixels: np.ndarray, record: StepRecord, path: Path) -> None:
        image = annotate(
            rgb_image(self._masked(pixels)[:, :, :3]),
            tap_point=record.tap_point,
            swipe=record.swipe,
            location=record.location,
            chosen_candidate=record.chosen_candidate,
        )
        image.save(path, format="JPEG", quality=85)
        self._embed_written(image, path)

    # -- lines -----------------------------------------------------------------------

    def _write_line(self, data: dict[str, Any]) -> None:
        with self._lock:
            self._file.write(json.dumps(data, ensure_ascii=False) + "\n")
            self._file.flush()

    def write_step(self, record: StepRecord) -> dict[str, Any]:
        """Append a step line; returns the redacted dict that was written."""
        data: dict[str, Any] = self._redact({"type": "step", **record.to_dict()})
        self._steps.append(data)
        self._write_line(data)
        return data

    def finish(self, result: RunResult) -> None:
        """Write the result line and the report, wait for the images, close."""
        self._result = self._redact({"type": "result", **result.to_dict()})
        self._write_line(self._result)
        self.close()

    def flush(self) -> None:
        """Wait until every image queued so far is on disk. A trajectory that stays open
        across calls (an MCP session's) flushes after each step, so that a process
        killed between two steps leaves every written step with its images."""
        pending, self._pending = self._pending, []
        for future in pending:
            try:
                future.result()
            except (OSError, ValueError) as exc:  # a lost image must not lose the run
                log.warning("could not write a trajectory image: %s", exc)

    def close(self) -> None:
        self.flush()
        self._pool.shutdown(wait=True)
        with self._lock:
            if not self._file.closed:
                self._file.close()
        try:
            write_report(self.folder, (self._header, self._steps, self._result), self._embedded)
        except OSError as exc:
            log.warning("could not write report.html: %s", exc)


def write_report(
    folder: Path,
    run: tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any] | None] | None = None,
    images: dict[str, str] | None = None,
) -> Path:
    """Write ``report.html`` of the trajectory in ``folder``: from ``run`` (header, steps,
    result: the lines as written), else read back from ``trajectory.jsonl``, which is how
    the report of a run whose process died before its end is made afterwards. The lines
    were redacted when written. Raises ``OSError`` (and ``ValueError`` for a damaged file).

    Written aside and renamed: a process stopped meanwhile (an MCP client gives its server
    a few seconds after closing stdin) leaves the previous report or none, never half a page."""
    header, steps, result = run if run is not None else load_trajectory(folder)
    path = Path(folder) / "report.html"
    partial = path.with_name(".report.html.partial")
    partial.write_text(render_report(Path(folder), header, steps, result, images), encoding="utf-8")
    os.replace(partial, path)
    return path


def load_trajectory(folder: Path) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any] | None]:
    """(header, steps, result) from a trajectory folder; result is None for an unfinished run.

    A last line cut short (the process was killed while writing it) is left out: the
    lines before it are whole, each written and flushed in one go. A damaged line
    anywhere else raises ``ValueError``."""
    header: dict[str, Any] = {}
    steps: list[dict[str, Any]] = []
    result = None
    with (Path(folder) / "trajectory.jsonl").open(encoding="utf-8") as fh:
        *whole, last = fh.read().split("\n")  # not splitlines: a text may hold U+2028
    for number, line in enumerate([*whole, last], start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError:
            if number <= len(whole):
                raise
            log.warning("%s: the last line is cut short (the run's process died while writing it)", folder)
            break
        kind = data.get("type")
        if kind == "run":
            header = data
        elif kind == "step":
            steps.append(data)
        elif kind == "result":
            result = data
    return header, steps, result
