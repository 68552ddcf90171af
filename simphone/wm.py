"""`wm size` and `wm density`: the display's size and density, queried and forced.

Source: AOSP frameworks/base ``services/core/java/com/android/server/wm/WindowManagerShellCommand.java``
(``runDisplaySize`` / ``runDisplayDensity`` / ``printInitialDisplaySize`` / ``parseDimension``):
``wm size [reset|WxH|WdpxHdp] [-d DISPLAY_ID]`` and ``wm density [reset|DENSITY] [-d DISPLAY_ID]``
print nothing when they set; the query prints ``Physical size: WxH`` and, while a size is
forced, ``Override size: WxH`` (the density alike); errors go to stderr (``Error: bad size
X``, ``Error: density must be >= 72``) and the command exits 255 (its -1). The query of a
phone with nothing forced at run time prints the profile's own sample (``outputs.wm_size``).

May import: the standard library, `simphone.commands`, `simphone.phone` (types only).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from simphone.commands import Usage, command, fail, ok, profile_output, template_values
from simphone.types import CommandResult

if TYPE_CHECKING:
    from simphone.phone import PhoneModel as Phone

__all__: list[str] = []


@command("wm")
def _wm(phone: Phone, args: list[str]) -> CommandResult:
    """`wm size [reset|WxH|WdpxHdp] [-d ID]`, `wm density [reset|N] [-d ID]` as AOSP's
    WindowManagerShellCommand (runDisplaySize / runDisplayDensity): setting prints nothing;
    the query prints the Physical line, and the Override line while one is forced."""
    verb, rest = (args[0], args[1:]) if args else ("", [])
    value = next((a for i, a in enumerate(rest) if a != "-d" and (i == 0 or rest[i - 1] != "-d")), None)
    if verb == "size":
        if value is None:
            if phone.forced_size is None:
                return profile_output(phone, "wm_size")
            values = template_values(phone)
            return ok(f"Physical size: {values['natural_width']}x{values['natural_height']}\n"
                      f"Override size: {phone.forced_size[0]}x{phone.forced_size[1]}\n")  # fmt: skip
        return _force_size(phone, value)
    if verb == "density":
        if value is None:
            if phone.forced_density is None:
                return profile_output(phone, "wm_density")
            natural = template_values(phone)["natural_density"]
            return ok(f"Physical density: {natural}\nOverride density: {phone.forced_density}\n")
        if value == "reset":
            phone.force_density(None)
            return ok()
        if not value.isdigit():
            return fail(f'Error: bad number java.lang.NumberFormatException: For input string: "{value}"\n', 255)
        if int(value) < 72:
            return fail("Error: density must be >= 72\n", 255)
        phone.force_density(int(value))
        return ok()
    raise Usage(f"Error: unknown command '{' '.join(args)}'", 255)


def _force_size(phone: Phone, value: str) -> CommandResult:
    if value == "reset":
        phone.force_size(None)
        return ok()
    width, sep, height = value.partition("x")
    if not sep or not width or not height:
        return fail(f"Error: bad size {value}\n", 255)

    def dimension(text: str) -> int:  # AOSP parseDimension: px, dp (x density / 160) or plain pixels
        if text.endswith("px"):
            return int(text[:-2])
        if text.endswith("dp"):
            return int(text[:-2]) * phone.density // 160
        return int(text)

    try:
        size = (dimension(width), dimension(height))
    except ValueError:
        bad = next(t for t in (width, height) if not t.removesuffix("px").removesuffix("dp").isdigit())
        return fail(f'Error: bad number java.lang.NumberFormatException: For input string: "{bad}"\n', 255)
    try:
        phone.force_size(size)
    except ValueError as exc:  # outside what the simulator draws: refused, the phone unchanged
        return fail(f"Error: {exc}\n", 255)
    return ok()
