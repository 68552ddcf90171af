"""`Phone`: the simulated phone as tests and the CLI use it, put together here.

The state model (`simphone.phone.PhoneModel`) is given the built-in apps
(`simphone.apps.builtin`), the shell commands (`simphone.commands` with the programs of
`simphone.system_commands`) and the screen (`simphone.screen.ScreenMixin`). This is the
one module that knows all of them, so none of them has to import another's caller.

May import: every `simphone` module but the ADB server and the CLI.
"""

from __future__ import annotations

from datetime import datetime

from simphone import content, screenrecord, system_commands, toybox, uiautomator, wm  # noqa: F401  (register their shell commands)
from simphone.apps import APPS
from simphone.apps.builtin import load_builtin_apps
from simphone.commands import run_command
from simphone.phone import PhoneModel
from simphone.profiles import DEFAULT_PROFILE, Profile
from simphone.screen import ScreenMixin

__all__ = ["Phone"]


class Phone(ScreenMixin, PhoneModel):
    """A simulated Android phone. See docs/architecture.md (`simphone`) and simphone/STATE.md.

    ``profile`` names the real phone it plays (``simphone/profiles/*.toml``; default: the
    simulator's own). ``number`` is its place among phones started together (1, 2, ...):
    it makes serials (and the default profile's model) differ. ``width`` / ``height`` /
    ``density`` override the profile's screen.
    """

    def __init__(self, width: int | None = None, height: int | None = None, seed: int = 0, name: str | None = None,
                 adb_keyboard: bool = False, clock: datetime | None = None, density: int | None = None, *,
                 profile: str | Profile = DEFAULT_PROFILE, number: int = 1) -> None:
        load_builtin_apps()
        super().__init__(apps=APPS, shell=run_command, profile=profile, width=width, height=height,
                         density=density, seed=seed, name=name, number=number, adb_keyboard=adb_keyboard,
                         clock=clock)
