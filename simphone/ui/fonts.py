"""Font discovery for the simulated phone's screen.

Order of preference: a sans-serif Latin font (DejaVu Sans, Liberation Sans, Noto Sans),
and for text with CJK characters a CJK font (WenQuanYi Zen Hei from Debian's
`fonts-wqy-zenhei`, Noto Sans CJK from `fonts-noto-cjk`, Droid Sans Fallback). If none
of those is installed, any TrueType/OpenType file under the usual font folders is used,
and with no font file at all Pillow's built-in scalable font. The folder list can be
extended with the `SIMPHONE_FONT_DIRS` variable (colon-separated); a missing CJK font
only means CJK text renders as boxes.

May import: the standard library and Pillow.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from PIL import ImageFont

__all__ = ["describe_fonts", "font", "has_cjk"]

FONT_DIRS = ["/usr/share/fonts", "/usr/local/share/fonts", os.path.expanduser("~/.fonts"), "/System/Library/Fonts"]
LATIN_REGULAR = ["DejaVuSans.ttf", "LiberationSans-Regular.ttf", "NotoSans-Regular.ttf", "Arial.ttf"]
LATIN_BOLD = ["DejaVuSans-Bold.ttf", "LiberationSans-Bold.ttf", "NotoSans-Bold.ttf", "Arial Bold.ttf"]
CJK = ["wqy-zenhei.ttc", "NotoSansCJK-Regular.ttc", "NotoSansCJKsc-Regular.otf", "DroidSansFallbackFull.ttf",
       "DroidSansFallback.ttf", "wqy-microhei.ttc"]


@lru_cache(maxsize=1)
def _index() -> dict[str, str]:
    """File name -> path of every font file found (first found wins)."""
    dirs = FONT_DIRS + [d for d in os.environ.get("SIMPHONE_FONT_DIRS", "").split(":") if d]
    found: dict[str, str] = {}
    for d in dirs:
        root = Path(d)
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*")):
            if path.suffix.lower() in (".ttf", ".ttc", ".otf"):
                found.setdefault(path.name, str(path))
    return found


def _pick(names: list[str]) -> str | None:
    index = _index()
    for name in names:
        if name in index:
            return index[name]
    return None


@lru_cache(maxsize=1)
def _paths() -> dict[str, str | None]:
    any_font = next(iter(sorted(_index().values())), None)
    regular = _pick(LATIN_REGULAR) or any_font
    return {"regular": regular, "bold": _pick(LATIN_BOLD) or regular, "cjk": _pick(CJK)}


def has_cjk(text: str) -> bool:
    return any(ord(ch) >= 0x2E80 for ch in text)


@lru_cache(maxsize=256)
def _load(kind: str, size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    path = _paths()[kind] or _paths()["regular"]
    if path is None:
        return ImageFont.load_default(size)
    return ImageFont.truetype(path, size)


def font(size: int, bold: bool = False, text: str = "") -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """A font of `size` pixels able to draw `text` (CJK text gets the CJK font when there is one)."""
    if text and has_cjk(text) and _paths()["cjk"]:
        return _load("cjk", size)
    return _load("bold" if bold else "regular", size)


def describe_fonts() -> dict[str, str]:
    """The font files in use, for `doctor`-style reports."""
    return {k: v or "(Pillow built-in)" for k, v in _paths().items()}
