"""Build ``perception/data/material_icons.npz``, the glyph table ``perception.glyph_match``
reads: every glyph of Google's Material Icons font, drawn and normalised as a screenshot
crop is (``perception.glyph_match.normalise``), packed one bit a pixel.

Source: Debian's ``fonts-material-design-icons-iconfont`` (6.7.0, Apache-2.0; the font is
Google's Material Icons "Regular" as repackaged by jossef/material-design-icons-iconfont),
which ships the TrueType font and a SCSS map from each icon's name to its codepoint. Run
after ``apt-get install fonts-material-design-icons-iconfont``::

    .venv/bin/python benchmarks/build_glyph_table.py

No test runs this (it needs the Debian package); the table it writes is committed with the
font's licence beside it (``perception/data/LICENSE-material-icons.txt``).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from perception.glyph_match import SIDE, TABLE_PATH, normalise  # noqa: E402

_PACKAGE = Path("/usr/share")
FONT = _PACKAGE / "fonts/truetype/material-design-icons-iconfont/MaterialIcons-Regular.ttf"
CODEPOINTS = _PACKAGE / "fonts-material-design-icons-iconfont/scss/_variables.scss"
_ENTRY = re.compile(r'^\s*"(?P<name>[a-z0-9_]+)":\s*(?P<code>[0-9a-f]{4,5}),?\s*$')
# drawn at this size (px a 24 dp em), then normalised to SIDE x SIDE
_DRAWN = 96


def codepoints(path: Path) -> dict[str, int]:
    """Name -> codepoint from the package's SCSS map (``"undo": e166,`` lines)."""
    found: dict[str, int] = {}
    for line in path.read_text().splitlines():
        if m := _ENTRY.match(line):
            found[m.group("name")] = int(m.group("code"), 16)
    return found


def draw(font: ImageFont.FreeTypeFont, code: int) -> np.ndarray:
    canvas = Image.new("L", (2 * _DRAWN, 2 * _DRAWN), 0)
    ImageDraw.Draw(canvas).text((_DRAWN // 2, _DRAWN // 2), chr(code), fill=255, font=font)
    return (np.asarray(canvas) >= 128).astype(np.uint8)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--font", type=Path, default=FONT)
    parser.add_argument("--codepoints", type=Path, default=CODEPOINTS)
    parser.add_argument("--out", type=Path, default=TABLE_PATH)
    args = parser.parse_args(argv)
    font = ImageFont.truetype(str(args.font), _DRAWN)
    names: list[str] = []
    masks: list[np.ndarray] = []
    seen: set[bytes] = set()
    for name, code in sorted(codepoints(args.codepoints).items()):
        glyph = normalise(draw(font, code))
        if glyph is None:
            print(f"skipped {name}: draws nothing", file=sys.stderr)
            continue
        names.append(name)
        masks.append(np.packbits(glyph.reshape(-1)))
        seen.add(masks[-1].tobytes())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out, names=np.array(names), bits=np.stack(masks), side=np.array(SIDE))
    print(f"{len(names)} glyphs ({len(seen)} distinct) -> {args.out} ({args.out.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
