"""The phone a command-line run takes when no serial is given and its script or flows open an
iPhone's app by its id (``mobile_agent.apps.platforms.PinnedApps``): the one ready iPhone
(``ios.devices``, USB), as with no serial an Android run takes the only attached Android phone
(``open_phone``). Used by ``mobile-agent run --script`` and ``mobile-agent test``."""

from __future__ import annotations

from mobile_agent.apps.platforms import PinnedApps
from mobile_agent.device import list_iphones
from mobile_agent.errors import MultipleDevicesError
from mobile_agent.settings import Settings

__all__ = ["pinned_serial"]


def pinned_serial(settings: Settings, pins: PinnedApps) -> str | None:
    """``adb.serial`` when set; else the one ready iPhone for ids of an iPhone's apps; else None
    (``open_phone``'s own choice). No ready iPhone: ``PlatformPinError`` (``unroutable``, REST's
    words); several: ``MultipleDevicesError`` (choose one with ``--serial``)."""
    if settings.adb.serial or pins.platform() != "ios":
        return settings.adb.serial
    ready = [p.serial for p in list_iphones(settings.ios) if p.ready]
    if not ready:
        raise pins.no_phone()
    if len(ready) > 1:
        raise MultipleDevicesError(f"several iPhones are ready ({', '.join(ready)}): choose one with --serial",
                                   serials=ready)
    return ready[0]
