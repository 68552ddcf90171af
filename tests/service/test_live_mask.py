"""The live view hides what the run's kept frames hide (``mobile_agent.agent.mask``): a run
types a secret on the simulated phone, and the frame ``GET /v1/tasks/{id}/live`` streams over
the real HTTP API (real uvicorn, the real adb server) has the secret's line black where a
capture taken over adb at the same moment shows the text; the rest of the frame is the phone's
screen. The boxes come from the run (``LiveMask``), not from reading each live frame again."""

from __future__ import annotations

import io
import re
import time

import numpy as np
from PIL import Image

from mobile_agent.device import open_device
from mobile_agent.device.hierarchy import dump_hierarchy
from mobile_agent.settings import AdbSettings
from tests.server_fixtures import TaggedPlanner, first_live_frame

SECRET = "Quokka7731Zz"


def _text_box(xml: str, text: str) -> tuple[int, int, int, int]:
    """The bounds of the node showing ``text`` (AOSP uiautomator dump: bounds="[l,t][r,b]")."""
    node = re.search(r'<node [^>]*text="' + re.escape(text) + r'"[^>]*bounds="\[(\d+),(\d+)\]\[(\d+),(\d+)\]"', xml)
    assert node is not None, "the typed secret is not on the phone's screen"
    left, top, right, bottom = (int(v) for v in node.groups())
    return left, top, right, bottom


def _ink_box(pixels: np.ndarray, box: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    """Where the glyphs are inside ``box``: pixels far from the box's usual colour."""
    left, top, right, bottom = box
    area = pixels[top:bottom, left:right, :3].astype(int)
    background = np.median(area.reshape(-1, 3), axis=0)
    ys, xs = np.nonzero(np.abs(area - background).sum(axis=2) > 150)
    assert len(xs) > 20, "no text drawn in the field"
    return left + int(xs.min()), top + int(ys.min()), left + int(xs.max()) + 1, top + int(ys.max()) + 1


def test_the_live_frame_hides_a_typed_secret(service, sim_phones) -> None:
    (phone,) = sim_phones(1)
    planner = TaggedPlanner(plans={"t-live": [
        "Open App (Notes)", "Click icon (orange plus, bottom right)", "Type ({{secret:pin}})",
        *[f"Wait ({1 + 0.01 * i:.2f})" for i in range(15)],
    ]})  # fmt: skip
    live = service([phone], planner=planner, **{"agent.named_secrets": {"pin": SECRET}})
    try:
        task = live.submit("[t-live] write a note titled {{secret:pin}}")
        deadline = time.monotonic() + 120
        while planner.calls.get("t-live", 0) < 6:  # the frame after the typing was kept (and read) a step ago
            assert time.monotonic() < deadline, "the run did not get past the typing"
            assert live.client.get(f"/v1/tasks/{task['id']}").json()["status"] in ("queued", "running")
            time.sleep(0.2)

        _, jpeg = first_live_frame(live.url, task["id"], dict(live.client.headers))
        device = open_device(AdbSettings(server_port=live.settings.adb.server_port), serial=phone.serial)
        direct = np.asarray(device.screenshot().pixels)[:, :, :3]
        left, top, right, bottom = _ink_box(direct, _text_box(dump_hierarchy(device).xml, SECRET))
        assert live.client.get(f"/v1/tasks/{task['id']}").json()["status"] == "running"

        shown = Image.open(io.BytesIO(jpeg)).convert("RGB")
        scale = shown.size[0] / direct.shape[1]
        got = np.asarray(shown.resize((direct.shape[1], direct.shape[0])), dtype=float)
        ink = (slice(top + 2, bottom - 2), slice(left + 2, right - 2))  # inside the glyphs' box, past JPEG's ringing
        assert got[ink].mean() < 20, f"the secret shows in the live frame (mean {got[ink].mean():.0f}, scale {scale:.2f})"
        assert direct[ink].astype(float).mean() > 60  # while the phone itself shows it
        outside = np.ones(direct.shape[:2], bool)
        outside[max(0, top - 40) : bottom + 40, :] = False  # the masked line, with the OCR box's margin
        assert np.abs(got[outside] - direct[outside]).mean() < 12, "the live frame is not this phone's screen"
    finally:
        live.stop()


def test_a_run_s_mask_applies_to_its_phone_only_and_only_while_it_runs() -> None:
    from mobile_agent.agent.mask import LiveMask, mask_live_frame, masking_live_frames

    frame = np.full((40, 30, 3), 200, np.uint8)
    mask = LiveMask()
    mask.set([(2, 3, 10, 8), (0, 30, 30, 35)])
    assert mask_live_frame("A1", frame) is frame  # no run on it: untouched, no copy
    with masking_live_frames("A1", mask):
        shown = mask_live_frame("A1", frame)
        assert not shown[3:8, 2:10].any() and not shown[30:35].any()
        assert (shown[10:30] == 200).all() and (frame == 200).all()  # the capture itself is left as it was
        assert mask_live_frame("B2", frame) is frame  # another phone
        mask.set([(2, 3, 10, 8)])  # the run's latest frame no longer shows the secret
        assert (mask_live_frame("A1", frame)[30:35] == 200).all()
        held = np.zeros_like(frame)
        mask.hold(held)  # the screen moves: the run's last masked frame is shown instead
        assert mask_live_frame("A1", frame) is held
        mask.hold(None)  # the run waits for its person: live captures again, the boxes still apply
        assert not mask_live_frame("A1", frame)[3:8, 2:10].any()
        mask.set([])  # the next settled frame was read
        assert mask_live_frame("A1", frame) is frame
    assert mask_live_frame("A1", frame) is frame  # the run ended


class _NoTree:
    """A phone that gives no accessibility tree (``DeviceLike.accessibility_xml`` None); nothing else is asked of it."""

    serial = "no-tree"

    def accessibility_xml(self) -> str | None:
        return None


def test_the_writer_s_late_read_of_an_older_frame_never_unmasks_the_typed_field(monkeypatch) -> None:
    """The trajectory writer reads a frame from before the typing on its own thread, behind the
    run: its boxes (none) must not replace what the live view hides since the secret was typed
    (the text field, from the phone's dump at that moment)."""
    from mobile_agent.agent import mask as masking
    from perception.accessibility import AccessibilityNode
    from perception.types import Box, TextLine

    field = AccessibilityNode("", "", "title", "android.widget.EditText", "notes", True, True, False,
                              Box(10, 40, 90, 80), 3)
    monkeypatch.setattr(masking, "screen_nodes", lambda device: [field])  # the phone's dump when typing starts

    class Reader:
        def ocr(self, image: np.ndarray) -> list[TextLine]:
            return [TextLine("Title", Box(10, 10, 60, 30), 0.9)]

    reader = Reader()
    mask = masking.SecretMask(["Quokka7731Zz"], lambda: reader)
    before = np.full((200, 100, 3), 200, np.uint8)
    mask.arm(_NoTree(), None, 100)
    assert mask.live.boxes() == [(10, 40, 90, 80)]
    assert mask.saved_copy(before) is before  # nothing on it to hide
    assert mask.live.boxes() == [(10, 40, 90, 80)]  # and the live view still hides the field


def test_a_phone_without_a_dump_gets_a_band_around_the_field_it_tapped() -> None:
    """No accessibility dump (a device that is not an adb phone): the field typed into is hidden by a
    band across the screen around the run's last tap, live at once and in every frame after it."""
    from mobile_agent.agent.mask import SecretMask

    class Blind:  # reads no text at all: only the band can hide the field
        def ocr(self, image: np.ndarray) -> list:
            return []

    blind = Blind()
    mask = SecretMask(["Quokka7731Zz"], lambda: blind)
    mask.arm(_NoTree(), (40, 100), 80)
    band = (0, 10, 80, 190)
    assert mask.live.boxes() == [band]
    frame = np.full((300, 80, 3), 200, np.uint8)
    shown = mask.masked(frame, _NoTree())
    assert not shown[10:190].any() and (shown[190:] == 200).all() and (shown[:10] == 200).all()


def test_an_iphone_s_fields_come_from_wda_s_page_source() -> None:
    """The masking reads an iPhone's accessibility tree too (WDA's page source, as the device layer
    gives it in the dump's format): a real sample's nodes, in screen pixels."""
    from mobile_agent.agent.mask import screen_nodes
    from mobile_agent.device.ios import IosDevice, WdaClient
    from tests.wda_fake import FakeWda

    wda = FakeWda().start()
    client = WdaClient(wda.url, timeout_s=10)
    try:
        nodes = screen_nodes(IosDevice("iphone-1", client))
    finally:
        client.close()
        wda.stop()
    assert nodes is not None and any(n.label == "General" for n in nodes)
    assert screen_nodes(_NoTree()) is None  # a device with no tree: the band instead


def test_the_frame_held_as_a_secret_is_typed_hides_the_fields_and_what_its_read_found(monkeypatch) -> None:
    """The step that types a secret was captured before the typing (not masked by the run): while
    the screen moves, the live view holds it with the fields ``arm`` hides and the lines its read
    found (a value of ``agent.secrets`` the app shows), never as it was captured."""
    from mobile_agent.agent import mask as masking
    from perception.accessibility import AccessibilityNode
    from perception.types import Box, TextLine

    field = AccessibilityNode("", "", "title", "android.widget.EditText", "notes", True, True, False,
                              Box(10, 40, 90, 80), 3)
    monkeypatch.setattr(masking, "screen_nodes", lambda device: [field])

    class Reader:
        def ocr(self, image: np.ndarray) -> list[TextLine]:
            return [TextLine("Quokka7731Zz", Box(10, 120, 90, 140), 0.9)]

    reader = Reader()
    mask = masking.SecretMask(["Quokka7731Zz"], lambda: reader)
    before = np.full((200, 100, 3), 200, np.uint8)
    mask.saved_copy(before)  # the trajectory writer read it, behind the run
    mask.arm(object(), None, 100)
    mask.moving(before)
    shown = mask.live(np.full((200, 100, 3), 90, np.uint8))  # a capture while the screen moves
    assert not shown[40:80, 10:90].any() and not shown[118:142, 8:92].any()
    assert (shown[0:30] == 200).all() and (before == 200).all()  # the held frame, the capture left as it was
