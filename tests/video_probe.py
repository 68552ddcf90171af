"""What a recorded MP4 holds, as ``ffprobe`` reports it (Debian's ffmpeg, `make ffprobe`):
the container's duration and the frames of its video stream. Where ffprobe is not installed,
PyAV's libavformat (the library ffprobe is built on) answers the same two questions."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


def probe(path: Path) -> tuple[float, int, str]:
    """(duration in seconds, video frames, which tool read them)."""
    ffprobe = shutil.which("ffprobe")
    if ffprobe is not None:
        def ask(*args: str) -> str:
            out = subprocess.run([ffprobe, "-v", "error", *args, "-of", "default=noprint_wrappers=1:nokey=1", str(path)],
                                 capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
            return out.stdout.strip()

        duration = float(ask("-show_entries", "format=duration"))
        frames = int(ask("-count_frames", "-select_streams", "v:0", "-show_entries", "stream=nb_read_frames"))
        return duration, frames, "ffprobe"
    import av

    with av.open(str(path)) as container:
        duration = container.duration / 1_000_000
        frames = sum(1 for _ in container.decode(video=0))
    return duration, frames, "pyav"
