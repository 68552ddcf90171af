"""The simulated phone: an Android device model served over the real ADB protocol,
playing one of the real phones of `simphone/profiles/`.

May import: the standard library, Pillow. Knows nothing of `mobile_agent`.
"""

from simphone.assembly import Phone
from simphone.profiles import profile_names
from simphone.types import CommandResult

__all__ = ["CommandResult", "Phone", "profile_names"]
