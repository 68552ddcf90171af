"""Bundle ids of Apple's built-in iPhone apps, by the names people call them.

Source of the ids: Apple's Platform Deployment guide, "Bundle IDs for native iPhone and
iPad apps" (support.apple.com/guide/deployment/depece748c41). English names only in this
slice; other languages and the home screen's icons (page source) come later (issue 33).

May import: the standard library.
"""

from __future__ import annotations

__all__ = ["APPLE_APPS", "bundle_for_label"]

APPLE_APPS: dict[str, str] = {
    "settings": "com.apple.Preferences",
    "safari": "com.apple.mobilesafari",
    "photos": "com.apple.mobileslideshow",
    "camera": "com.apple.camera",
    "messages": "com.apple.MobileSMS",
    "mail": "com.apple.mobilemail",
    "maps": "com.apple.Maps",
    "calendar": "com.apple.mobilecal",
    "clock": "com.apple.mobiletimer",
    "notes": "com.apple.mobilenotes",
    "reminders": "com.apple.reminders",
    "app store": "com.apple.AppStore",
    "phone": "com.apple.mobilephone",
    "contacts": "com.apple.MobileAddressBook",
    "music": "com.apple.Music",
    "health": "com.apple.Health",
    "weather": "com.apple.weather",
    "calculator": "com.apple.calculator",
    "files": "com.apple.DocumentsApp",
}


def bundle_for_label(label: str) -> str | None:
    """The bundle id of the app named ``label`` (case and spaces ignored), or None."""
    return APPLE_APPS.get(" ".join(label.lower().split()))
