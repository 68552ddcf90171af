"""The simulated phone's device model: state, screen, input and the shell commands.

`Phone` holds everything a real Android phone would (settings, installed packages,
activity back stack, text focus, clock, app data) as plain JSON-able state; the screen
is rendered from that state with Pillow, only when it changed, and the PNG / raw
framebuffer bytes of the current frame are cached.

May import: the standard library, Pillow, `simphone.types`, `simphone.fs`, `simphone.ui`,
`simphone.apps`, `simphone.commands`. Knows nothing of the agent.
"""

from __future__ import annotations

import io
import struct
from datetime import datetime

from PIL import Image

from simphone.types import CommandResult

__all__ = ["Phone"]

try:  # the ADB side's virtual filesystem (for sync:); a dict until it lands
    from simphone.fs import VirtualFS  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - only while the fs module is missing

    class VirtualFS(dict):  # type: ignore[no-redef]
        """Placeholder: path -> bytes."""


class Phone:
    """A simulated Android phone. See docs/architecture.md (`simphone`) and simphone/STATE.md."""

    def __init__(self, width: int = 1080, height: int = 2400, seed: int = 0, name: str = "simphone") -> None:
        if width < 320 or height < 480:
            raise ValueError(f"screen too small: {width}x{height} (at least 320x480)")
        self.width = width
        self.height = height
        self.name = name
        self.model = "SimPhone 1"
        self.device = "simphone"
        self.seed = seed
        self.fs = VirtualFS()
        self.clock = datetime(2024, 5, 20, 9, 41, 0)
        self._frame: Image.Image | None = None
        self._png: bytes | None = None
        self._raw: bytes | None = None
        self.taps: list[tuple[int, int]] = []

    # -- screen -----------------------------------------------------------------
    def _render(self) -> Image.Image:
        if self._frame is None:
            self._frame = Image.new("RGBA", (self.width, self.height), (245, 245, 245, 255))
        return self._frame

    def screencap_png(self) -> bytes:
        if self._png is None:
            buf = io.BytesIO()
            self._render().save(buf, format="PNG", compress_level=1)
            self._png = buf.getvalue()
        return self._png

    def screencap_raw(self) -> bytes:
        if self._raw is None:
            img = self._render()
            self._raw = struct.pack("<IIII", img.width, img.height, 1, 0) + img.tobytes()
        return self._raw

    # -- shell --------------------------------------------------------------------
    def run(self, argv: list[str]) -> CommandResult:
        from simphone.commands import run_command

        return run_command(self, list(argv))
