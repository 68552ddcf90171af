"""Which platform an app id belongs to: what a script's ``Open App (com.android.settings)``
says about the phone it is written for.

An id is Android's when the alias table (``aliases.toml``) lists it as a package, or when one
of its dotted parts is ``android`` (``com.android.*``, ``com.google.android.*``: Android's
own and Google's packages; no iPhone bundle id in Apple's or the listed apps' tables has such
a part). It is an iPhone's when the bundle-id tables of ``mobile_agent.device.ios.apps`` list
it (Apple's built-in apps, the listed third-party apps). An app name ("Settings") and an id
neither table knows belong to no one platform: None.

``PinnedApps`` is what a script, a flow or one operation says about its phone by those ids, and
the one place that words a refusal: every interface that takes one (REST tasks and schedules,
the farm API, ``mobile-agent run --script``, ``mobile-agent test``, MCP's ``open_app``) gives
the same answer in the same words, a ``PlatformPinError`` whose ``code`` is ``platforms_mixed``
(both kinds' ids), ``platform_conflict`` (a ``platform`` asked of the other kind) or
``unroutable`` (a phone of the other kind, or none of that kind).

May import: the standard library, ``mobile_agent.device``, ``mobile_agent.errors`` and this
package's modules.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from mobile_agent.apps.names import known_packages
from mobile_agent.device import Platform, device_refusal
from mobile_agent.device.ios.apps import BUNDLE_IDS
from mobile_agent.errors import MobileAgentError

__all__ = ["PinnedApps", "PlatformPinError", "app_id_platform"]

PinCode = Literal["platforms_mixed", "platform_conflict", "unroutable"]
_PLATFORM_APPS = {"android": "an Android app", "ios": "an iPhone app"}

_DOTTED_ID = re.compile(r"^[A-Za-z][\w-]*(?:\.[A-Za-z0-9_-]+)+$")


def app_id_platform(app: str) -> Platform | None:
    """``"android"`` or ``"ios"`` for an app id only one platform has, else None."""
    app = app.strip()
    if not _DOTTED_ID.match(app):
        return None  # a name, not an id
    if app in BUNDLE_IDS:
        return "ios"
    if app in known_packages() or "android" in app.split("."):
        return "android"
    return None


class PlatformPinError(MobileAgentError):
    """A script, flow or operation whose app ids cannot run where it was sent; ``code`` names
    the case (``PinnedApps``), the same word a REST 422 gives as its ``type``."""

    def __init__(self, message: str, *, code: PinCode) -> None:
        super().__init__(message, code=code)
        self.code: PinCode = code


@dataclass(frozen=True)
class PinnedApps:
    """The app ids that ``where`` (``"script"``, ``"flow"``, ``"flows"``, ``"operation"``) opens
    and that only one platform has (``app_id_platform``), each with its platform. Empty: it
    pins nothing (names, unknown ids, an instruction in words)."""

    where: str
    apps: Mapping[str, Platform] = field(default_factory=dict)

    def platform(self) -> Platform | None:
        """The one platform its ids are of, or None; ids of both: ``platforms_mixed``."""
        platforms = sorted(set(self.apps.values()))
        if len(platforms) > 1:
            raise PlatformPinError(f"{self._opens()}apps of several platforms: {self._named()}; a task runs on one "
                                   "phone", code="platforms_mixed")
        return platforms[0] if platforms else None

    def conflict(self, asked: str | None) -> PlatformPinError | None:
        """``platform_conflict`` when a platform was asked (``"platform"``) that its ids are not of."""
        pinned = self.platform()
        if pinned is None or asked is None or asked == pinned:
            return None
        return PlatformPinError(f"{self._opens()}{self._named()}, which a phone of platform {asked!r} does not have",
                                code="platform_conflict")

    def on_device(self, serial: str) -> PlatformPinError | None:
        """``unroutable`` when phone ``serial`` is of the other platform than its ids."""
        pinned = self.platform()
        refusal = None if pinned is None else device_refusal(serial, pinned)
        return None if refusal is None else self.unroutable(refusal)

    def no_phone(self) -> PlatformPinError:
        """``unroutable``: no phone of the ids' platform is attached and ready (the command line's
        refusal when it looked for one itself)."""
        return self.unroutable(f"no phone of platform {self.platform()!r} is attached and ready")

    def unroutable(self, refusal: str) -> PlatformPinError:
        """``unroutable``: no phone that can run it, for the reason ``refusal`` says."""
        return PlatformPinError(f"{self._opens()}{self._named()}: {refusal}", code="unroutable")

    def _opens(self) -> str:
        return f"the {self.where} {'open' if self.where.endswith('s') else 'opens'} "

    def _named(self) -> str:
        return ", ".join(f"{app} ({_PLATFORM_APPS[p]})" for app, p in sorted(self.apps.items()))
