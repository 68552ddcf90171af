"""Screenshots straight from a raw framebuffer (a three-channel view of four-byte pixels)
are encoded from that buffer, byte for byte the same as from a copied RGB array."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from mobile_agent.device.screenshot import decode_framebuffer
from mobile_agent.pixels import four_byte_source as _four_byte_source
from mobile_agent.planner.images import encode_image, rgb_image


def _frame(fmt: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(what decode_framebuffer returns for a 37x23 frame of format ``fmt``, its RGB copy).
    The bytes lie after a 4-byte header in a larger buffer, as ``AdbHost.read_framebuffer``
    reads them (the colorspace word of Android 9+)."""
    rng = np.random.default_rng(fmt + seed)
    buffer = rng.integers(0, 256, size=4 + 37 * 23 * 4, dtype=np.uint8)
    pixels = decode_framebuffer(37, 23, fmt, buffer[4:])
    return pixels, np.ascontiguousarray(pixels)


@pytest.mark.parametrize(("fmt", "order"), [(1, "RGBX"), (5, "BGRX")])  # RGBA_8888, BGRA_8888 (AOSP PixelFormat)
def test_a_framebuffer_view_is_read_from_its_buffer(fmt: int, order: str) -> None:
    pixels, copy = _frame(fmt)
    source = _four_byte_source(pixels)
    assert source is not None and source[1] == order
    image = rgb_image(pixels)
    assert image.mode == "RGB" and np.array_equal(np.asarray(image), copy)
    assert encode_image(pixels, 16, 80) == encode_image(copy, 16, 80)
    png = io.BytesIO()
    image.save(png, format="PNG")
    assert np.array_equal(np.asarray(Image.open(png).convert("RGB")), copy)


def test_other_arrays_are_copied_as_before() -> None:
    pixels, copy = _frame(1)
    for other in (copy, pixels[:, 1:], pixels[:, ::2], np.zeros((5, 5, 3), np.uint8)):
        assert _four_byte_source(other) is None
        assert np.array_equal(np.asarray(rgb_image(other)), np.ascontiguousarray(other))


def test_any_view_of_the_buffer_in_reverse_is_read_as_such() -> None:
    pixels, _ = _frame(1)  # RGBA seen backwards: B, G, R
    backwards = pixels[:, :, ::-1]
    assert _four_byte_source(backwards) is not None
    assert np.array_equal(np.asarray(rgb_image(backwards)), np.ascontiguousarray(backwards))


@pytest.mark.parametrize("fmt", [1, 5])
def test_the_change_ratio_reads_the_buffer_alike(fmt: int) -> None:
    from mobile_agent.agent.screen_diff import _prepare, change_ratio

    before, before_copy = _frame(fmt)
    after, after_copy = _frame(fmt, seed=10)
    assert np.array_equal(_prepare(before, 0.04, 0.06), _prepare(before_copy, 0.04, 0.06))
    assert change_ratio(before, after) == change_ratio(before_copy, after_copy) > 0.5
    assert change_ratio(before, before) == 0.0


def test_a_screenshot_over_adb_is_read_from_its_buffer(sim_phone, adb_server) -> None:
    """The real path: the simulated phone's raw screencap (Android 9+ header) through the adb
    server and the device layer is a view the encoders read without a copy."""
    from mobile_agent.device import open_device
    from mobile_agent.settings import AdbSettings

    device = open_device(AdbSettings(server_port=adb_server.port), serial=sim_phone.serial)
    pixels = device.screenshot().pixels
    assert _four_byte_source(pixels) is not None
    expected = np.asarray(sim_phone.phone.screenshot())
    assert np.array_equal(np.asarray(rgb_image(pixels)), expected)
