"""The simulated phone: an Android device model served over the real ADB protocol.

May import: the standard library, Pillow. Knows nothing of `mobile_agent`.
"""

from simphone.phone import Phone
from simphone.types import CommandResult

__all__ = ["CommandResult", "Phone"]
