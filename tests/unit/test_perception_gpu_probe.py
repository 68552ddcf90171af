"""Resolving the icon backends' device with ``compute_device = "auto"`` (the default) asks torch
whether a GPU is there, which imports torch (1.5-3 s). On Linux with no GPU kernel driver the
answer is known without it (``perception.ml.gpu_driver_absent``); with a driver, torch still
decides. Run in a fresh interpreter: whether torch was imported is the thing measured."""

from __future__ import annotations

import subprocess
import sys

import pytest

from perception import ml

pytestmark = pytest.mark.skipif(not ml.torch_installed() or not sys.platform.startswith("linux"),
                                reason="needs torch (the ml extra) on Linux")

PROBE = """
import sys
from perception import ml
from perception.config import PerceptionConfig
ml._GPU_DRIVER_PATHS = tuple(sys.argv[1:])
print(ml.resolve_torch_device(PerceptionConfig()), "torch" in sys.modules)
"""


def _resolve(*driver_paths: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", PROBE, *driver_paths], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_no_gpu_driver_resolves_cpu_without_importing_torch(tmp_path) -> None:
    assert _resolve(str(tmp_path / "no-such-driver")) == ["cpu", "False"]


def test_a_gpu_driver_leaves_the_answer_to_torch(tmp_path) -> None:
    driver = tmp_path / "nvidiactl"
    driver.write_text("")
    device, imported = _resolve(str(driver))
    assert imported == "True"  # torch was asked
    assert device in ("cpu", "cuda")  # its answer (a file is no GPU: cpu here, cuda on a GPU machine)
