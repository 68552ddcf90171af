"""What the model is told about the phone it drives: an Android phone or an iPhone.

The device says which (``DeviceLike.platform``); the run puts it in ``PlanRequest.platform``
and every dialect's prompt names the phone with ``phone_name`` and, on an iPhone, adds
``phone_note``: iOS has no Back key (the agent's Back is the system's swipe from the left
edge; an app's own back button at the top left is surer), no Menu key, and Home is the home
indicator. The operations keep their words on both (the paper's Back and Home); only what
they do on the phone is said.

May import: the standard library and ``mobile_agent.operations.context`` (the platform type).
"""

from __future__ import annotations

from mobile_agent.operations.context import Platform

__all__ = ["IOS_NOTE", "phone_name", "phone_note"]

_NAMES: dict[str, str] = {"android": "an Android phone", "ios": "an iPhone"}

IOS_NOTE = (
    "The phone is an iPhone (iOS). It has no Back key: the Back operation goes to the previous "
    "page with the system's swipe from the left edge of the screen; where the app shows its own back button "
    "(at the top left: an arrow, often with the previous page's name), tapping that button is "
    "surer. Home goes to the home screen (the home indicator at the bottom of the screen). "
    "There is no Menu key."
)


def phone_name(platform: Platform) -> str:
    """``an Android phone`` / ``an iPhone``: the words each prompt names the phone with."""
    return _NAMES[platform]


def phone_note(platform: Platform) -> str:
    """What the model must know about this phone's system buttons ("" on Android, whose
    Back and Home keys the prompts already describe)."""
    return IOS_NOTE if platform == "ios" else ""
