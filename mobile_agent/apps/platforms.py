"""Which platform an app id belongs to: what a script's ``Open App (com.android.settings)``
says about the phone it is written for.

An id is Android's when the alias table (``aliases.toml``) lists it as a package, or when one
of its dotted parts is ``android`` (``com.android.*``, ``com.google.android.*``: Android's
own and Google's packages; no iPhone bundle id in Apple's or the listed apps' tables has such
a part). It is an iPhone's when the bundle-id tables of ``mobile_agent.device.ios.apps`` list
it (Apple's built-in apps, the listed third-party apps). An app name ("Settings") and an id
neither table knows belong to no one platform: None.

May import: the standard library, ``mobile_agent.device`` and this package's modules.
"""

from __future__ import annotations

import re

from mobile_agent.apps.names import known_packages
from mobile_agent.device import Platform
from mobile_agent.device.ios.apps import BUNDLE_IDS

__all__ = ["app_id_platform"]

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
