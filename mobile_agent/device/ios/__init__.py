"""iPhones through WebDriverAgent: ``WdaClient`` (HTTP) and ``IosDevice`` (the device
protocol of ``mobile_agent.operations.context.AgentDevice``). Issue 33, first slice.

May import: httpx, numpy, Pillow, the standard library, ``mobile_agent.errors`` and the
sibling modules of ``mobile_agent.device``.
"""

from __future__ import annotations

from mobile_agent.device.ios.apps import APPLE_APPS, bundle_for_label
from mobile_agent.device.ios.device import IOS_PREFIX, IosDevice
from mobile_agent.device.ios.wda import WdaClient, WdaError, WdaScreen, WdaStatus

__all__ = ["APPLE_APPS", "IOS_PREFIX", "IosDevice", "WdaClient", "WdaError", "WdaScreen", "WdaStatus", "bundle_for_label"]
