"""The simulated phone's screen: rendering the state with Pillow, touch, screenshots.

`ScreenMixin` adds to `simphone.phone.PhoneModel` what needs the renderer and the apps'
drawing code: `app_context`, `tap` / `long_press` / `swipe` (dispatched to what the
current frame registered), `ground_truth`, `screencap_png` / `screencap_raw`,
`screenshot`. The frame is rendered only when the state changed (`frame_key`), and the
PNG / raw bytes of the current frame are cached.

May import: the standard library, Pillow, `simphone.ui`, `simphone.apps` (AppContext),
`simphone.phone` (types only).
"""

from __future__ import annotations

import copy
import io
import struct
from typing import TYPE_CHECKING, Any

from PIL import Image, ImageDraw

from simphone.apps import AppContext
from simphone.ui import chrome, keyguard, permission_dialog
from simphone.ui.canvas import Canvas
from simphone.ui.theme import theme_for

if TYPE_CHECKING:
    from simphone.phone import PhoneModel

    _Base = PhoneModel
else:
    _Base = object

__all__ = ["ScreenMixin"]


class ScreenMixin(_Base):
    """Rendering and touch for a `PhoneModel` (mixed in by `simphone.assembly.Phone`)."""

    _frame_key: str | None = None
    _canvas: Canvas | None = None
    _png: bytes | None = None
    _raw: bytes | None = None

    # -- touch --------------------------------------------------------------------------
    def tap(self, x: float, y: float) -> None:
        with self.lock:
            if self.keyguard_showing:
                return  # the lock screen takes a swipe up, not a tap
            target = self._ensure_frame().target_at(x, y)
            if target is not None:
                target.on_tap()

    def long_press(self, x: float, y: float) -> None:
        with self.lock:
            if self.keyguard_showing:
                return
            target = self._ensure_frame().target_at(x, y)
            if target is not None:
                (target.on_long_press or target.on_tap)()

    def swipe(self, x1: float, y1: float, x2: float, y2: float, duration_ms: int = 300) -> None:
        """A swipe; one that hardly moves is a tap, or a long press when it lasts ≥ 500 ms."""
        with self.lock:
            if abs(x2 - x1) < 24 and abs(y2 - y1) < 24:
                if duration_ms >= 500:
                    self.long_press(x1, y1)
                else:
                    self.tap(x1, y1)
                return
            if self.keyguard_showing:
                if y1 - y2 > self.height / 8:  # swipe up: an insecure keyguard goes away
                    self.unlock()
                return
            canvas = self._ensure_frame()
            if not self.shade_open and y1 < chrome.status_bar_px(self) and y2 - y1 > 100 * canvas.scale:
                self._state["shade_open"] = True  # pulled down from the status bar
                return
            area = canvas.scroll_area_at(x1, y1)
            if area is not None:
                area.on_scroll((x2 - x1) / canvas.scale, (y2 - y1) / canvas.scale)

    # -- screen -------------------------------------------------------------------------
    def app_context(self, package: str, content: tuple[float, float, float, float] | None = None) -> AppContext:  # type: ignore[override]
        if content is None:
            content = chrome.content_box(self, self.width, self.height)
        return AppContext(self, package, content, theme_for(self.dark_mode))

    def _ensure_frame(self) -> Canvas:
        """Render the current state, unless the frame on hand already shows it."""
        key = self.frame_key()
        if self._canvas is None or key != self._frame_key:
            canvas = Canvas(self.width, self.height, theme_for(self.dark_mode))
            if not self.screen_on:
                canvas.draw.rectangle((0, 0, self.width, self.height), fill=(0, 0, 0))
                self._canvas, self._frame_key, self._png, self._raw = canvas, key, None, None
                return canvas
            if self.keyguard_showing:
                keyguard.draw_lock_screen(self, canvas)
                canvas.finish()
                self._canvas, self._frame_key, self._png, self._raw = canvas, key, None, None
                return canvas
            package = self.foreground
            ctx = self.app_context(package, chrome.content_box(self, self.width, self.height))
            if not self.shade_open:  # the pulled-down shade covers the whole screen
                with canvas.clip(ctx.content):
                    self.apps[package].render(ctx, canvas)
                permission_dialog.draw_dialog(self, canvas)  # a permission request over the app, if one shows
            chrome.draw_system_ui(self, canvas)
            canvas.finish()
            self._canvas, self._frame_key, self._png, self._raw = canvas, key, None, None
        return self._canvas

    def ground_truth(self) -> list[dict[str, Any]]:
        """Every visible element: {kind: text|icon|widget, text, description, box: [l, t, r, b]
        in screen pixels, clickable}."""
        with self.lock:
            return copy.deepcopy(self._ensure_frame().elements)

    def _captured(self, canvas: Canvas) -> Image.Image:
        """What a capture of the frame shows: as drawn, but a FLAG_SECURE app's content area
        black (SurfaceFlinger's ``SecureLayerMode::Redact``, see `simphone.apps.vault`); the
        status and navigation bars are SystemUI's own layers and stay."""
        app = self.apps.get(self.foreground)
        if not (app is not None and app.secure_window and self.screen_on and not self.keyguard_showing
                and not self.shade_open):  # fmt: skip
            return canvas.image
        image = canvas.image.copy()
        left, top, right, bottom = chrome.content_box(self, self.width, self.height)
        ImageDraw.Draw(image).rectangle((left, top, right - 1, bottom - 1), fill=(0, 0, 0))
        return image

    def screencap_png(self) -> bytes:
        with self.lock:
            canvas = self._ensure_frame()
            if self._png is None:
                buf = io.BytesIO()
                self._captured(canvas).save(buf, format="PNG", compress_level=1)
                self._png = buf.getvalue()
            return self._png

    def screencap_raw(self) -> bytes:
        """Android's raw framebuffer: u32 LE width, height, format (1 = RGBA_8888), then the
        colorspace word (0) on Android 9+ (the profile's `raw_header_words`: 3 or 4), RGBA bytes."""
        with self.lock:
            canvas = self._ensure_frame()
            if self._raw is None:
                img = self._captured(canvas)  # RGB; "RGBX" packs it as RGBA with alpha 255, without a converted copy
                words = (img.width, img.height, 1, 0)[: self.profile.raw_header_words]
                self._raw = struct.pack(f"<{len(words)}I", *words) + img.tobytes("raw", "RGBX")
            return self._raw

    def screenshot(self):
        """The current frame as a capture shows it, as a Pillow RGB image (a copy)."""
        with self.lock:
            canvas = self._ensure_frame()
            image = self._captured(canvas)
            return image.copy() if image is canvas.image else image
