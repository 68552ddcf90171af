"""ONNX Runtime's intra-op threads without busy-waiting, for the OCR sessions RapidOCR builds.

By default ONNX Runtime's pool threads spin for a while after each parallel operator,
waiting for the next one, instead of sleeping (the session options
``session.intra_op.allow_spinning`` / ``session.inter_op.allow_spinning``, "1" by default;
onnxruntime's ``onnxruntime_session_options_config_keys.h``). Alone on a machine that buys
a little latency. On a host that drives several phones, the spinning threads burn cores the
other runs need, and under oversubscription they spin longer still. Measured here (2 cores,
three Rico screens at 540x1200 after a warm-up, ``perception.ocr_threads`` = ONNX Runtime's
choice): one process alone, 1.06 s wall and 2.03 CPU-s spinning against 1.05 s and 1.77 CPU-s
not; three processes at once, 2.4-3.8 s wall and 1.8-3.4 CPU-s each spinning against
1.7-2.8 s and 1.2-2.4 CPU-s not. Same text either way. So ``perception.ocr_spinning`` is off
by default.

RapidOCR has no setting for it: its ONNX Runtime engine builds the ``SessionOptions`` of each
model (detector, classifier, recognizer; the last two on first use) in the static method
``OrtInferSession._init_sess_opts``. ``allow_spinning(False)`` wraps that method once per
process so that the options it returns carry both entries set to "0". If RapidOCR renames
it, ``allow_spinning`` logs a warning and the sessions keep ONNX Runtime's default
(tests/unit/test_perception_ort_spinning.py fails then, so an upgrade notices).

May import: the standard library, rapidocr, onnxruntime.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

__all__ = ["SPINNING_KEYS", "allow_spinning", "spinning_allowed"]

log = logging.getLogger(__name__)

SPINNING_KEYS = ("session.intra_op.allow_spinning", "session.inter_op.allow_spinning")

_lock = threading.Lock()
_state = {"spinning": True}  # what the wrapper applies to sessions built from now on


def _engine_class() -> Any:
    from rapidocr.inference_engine.onnxruntime.main import OrtInferSession

    return OrtInferSession


def allow_spinning(allowed: bool) -> bool:
    """Whether ONNX Runtime sessions that RapidOCR builds from now on may spin; True when
    that is in effect (False: RapidOCR's engine could not be wrapped, see the log)."""
    with _lock:
        _state["spinning"] = allowed
        engine = _engine_class()
        current = engine.__dict__.get("_init_sess_opts")
        if not isinstance(current, staticmethod):
            if allowed:
                return True
            log.warning("rapidocr's OrtInferSession has no _init_sess_opts: ONNX Runtime's threads keep spinning")
            return False
        if getattr(current.__func__, "_mobile_agent_spinning", False):
            return True
        build = current.__func__

        def init_sess_opts(cfg: Any) -> Any:
            options = build(cfg)
            if not _state["spinning"]:
                for key in SPINNING_KEYS:
                    options.add_session_config_entry(key, "0")
            return options

        init_sess_opts._mobile_agent_spinning = True  # type: ignore[attr-defined]
        engine._init_sess_opts = staticmethod(init_sess_opts)
        return True


def spinning_allowed(session: Any) -> bool:
    """Whether an ONNX Runtime ``InferenceSession``'s threads may spin (its options' entry,
    "1" when unset)."""
    options = session.get_session_options()
    try:
        value = options.get_session_config_entry(SPINNING_KEYS[0])
    except Exception:  # noqa: BLE001 - onnxruntime raises a bare RuntimeError for an unset key
        return True
    return str(value) != "0"
