"""`uiautomator dump`: the accessibility tree of the current screen, served from the
phone's ground truth in the format of AOSP UiAutomator's window_dump.xml.

Format (AOSP frameworks/base cmds/uiautomator, AccessibilityNodeInfoDumper.java and
DumpCommand.java@4fecab5): an XML declaration written by XmlSerializer
(``<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>``), ``<hierarchy
rotation="N">``, then nested ``<node>`` elements whose attributes come in this order:
index, text, resource-id, class, package, content-desc, checkable, checked, clickable,
enabled, focusable, focused, scrollable, long-clickable, password, selected,
bounds="[x1,y1][x2,y2]". The command then prints ``UI hierchary dumped to: PATH`` (sic)
on stdout; with ``/dev/tty`` as the file the XML itself goes to the terminal first.
Errors go to stderr with exit status 0, as DumpCommand returns normally:
``ERROR: could not get idle state.`` (the profile's ``ui_dump = "idle-timeout"``: a
screen that never settles) and ``ERROR: null root node returned by
UiTestAutomationBridge.`` (``"null-root"``, and a screen that is off). With ``"stale"``
the first dump after the screen changed still shows the screen of the previous dump (a
dump taken while a transition settles reads the window that is going away); the next one
is current.

The tree is flat under one root node of the foreground app: one node per ground-truth
element, in drawing order. Real trees nest layouts; what a reader needs (text,
content-desc, bounds, clickable, checked, focused) is the same.

May import: the standard library, `simphone.commands`, `simphone.types`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from xml.sax.saxutils import escape

from simphone import permissions
from simphone.commands import command, ok
from simphone.types import CommandResult

if TYPE_CHECKING:
    from simphone.phone import PhoneModel as Phone

__all__ = ["DEFAULT_DUMP_FILE", "window_dump"]

DEFAULT_DUMP_FILE = "/sdcard/window_dump.xml"
_XML_DECLARATION = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"
_ATTRS = ("index", "text", "resource-id", "class", "package", "content-desc", "checkable", "checked", "clickable",
          "enabled", "focusable", "focused", "scrollable", "long-clickable", "password", "selected", "bounds")


def _attr(value: str) -> str:
    return escape(value, {'"': "&quot;"})


def _node(values: dict[str, Any]) -> str:
    return "<node " + " ".join(f'{k}="{_attr(str(values[k]))}"' for k in _ATTRS)


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _element_node(index: int, element: dict[str, Any], package: str) -> str:
    description = element.get("description") or ""
    lowered = description.lower()
    kind = element.get("kind")
    checkable = kind == "widget" and any(w in lowered for w in ("switch", "checkbox", "toggle"))
    checked = checkable and lowered.rstrip().endswith(", on")
    field = kind == "widget" and "text field" in lowered
    if field:
        cls = "android.widget.EditText"
    elif checkable:
        cls = "android.widget.Switch"
    elif kind == "icon":
        cls = "android.widget.ImageView"
    elif kind == "text":
        cls = "android.widget.TextView"
    else:
        cls = "android.view.View"
    left, top, right, bottom = (int(round(v)) for v in element["box"])
    return _node({
        "index": index, "text": element.get("text") or "", "resource-id": "", "class": cls, "package": package,
        "content-desc": description if kind != "text" else "", "checkable": _bool(checkable),
        "checked": _bool(checked), "clickable": _bool(bool(element.get("clickable"))), "enabled": "true",
        "focusable": _bool(field or bool(element.get("clickable"))), "focused": _bool(field and "focused" in lowered),
        "scrollable": "false", "long-clickable": "false", "password": "false",
        "selected": _bool(kind == "widget" and "selected" in lowered), "bounds": f"[{left},{top}][{right},{bottom}]",
    }) + " />"


def window_dump(phone: Phone) -> str:
    """The window_dump.xml of the current screen."""
    package = "com.android.systemui" if phone.keyguard_showing or phone.shade_open else phone.foreground
    if package == phone.foreground and phone.permission_request is not None:
        package = permissions.CONTROLLER_PACKAGE  # the permission dialog's window has the focus
    root = _node({
        "index": 0, "text": "", "resource-id": "", "class": "android.widget.FrameLayout", "package": package,
        "content-desc": "", "checkable": "false", "checked": "false", "clickable": "false", "enabled": "true",
        "focusable": "false", "focused": "false", "scrollable": "false", "long-clickable": "false",
        "password": "false", "selected": "false", "bounds": f"[0,0][{phone.width},{phone.height}]",
    })
    children = "".join(_element_node(i, el, package) for i, el in enumerate(phone.ground_truth()))
    return f'{_XML_DECLARATION}<hierarchy rotation="{phone.rotation}">{root}>{children}</node></hierarchy>'


@command("uiautomator")
def _uiautomator(phone: Phone, args: list[str]) -> CommandResult:
    if args[:1] != ["dump"]:
        return CommandResult(
            stderr=b"Usage: uiautomator <subcommand> [options]\n\nAvailable subcommands:\n\n"
                   b"help: displays help message\n\nruntest: executes UI automation tests\n\n"
                   b"dump: creates an XML dump of current UI hierarchy\n\nevents: prints out accessibility events "
                   b"until terminated\n",
            exit_code=0 if args[:1] == ["help"] else 1,
        )
    path = DEFAULT_DUMP_FILE
    for arg in args[1:]:
        if not arg.startswith("-"):
            path = arg
    mode = phone.profile.ui_dump
    if mode == "idle-timeout":
        return CommandResult(stderr=b"ERROR: could not get idle state.\n")
    if mode == "null-root" or not phone.screen_on:
        return CommandResult(stderr=b"ERROR: null root node returned by UiTestAutomationBridge.\n")
    xml = window_dump(phone)
    key = phone.frame_key()
    previous = getattr(phone, "_ui_dump_seen", None)
    phone._ui_dump_seen = (key, xml)  # type: ignore[attr-defined]
    if mode == "stale" and previous is not None and previous[0] != key:
        xml = previous[1]
    done = f"UI hierchary dumped to: {path}\n"
    if path == "/dev/tty":
        return ok(xml + done)
    try:
        phone.fs.write_file(path, xml.encode("utf-8"))
    except OSError as exc:
        return CommandResult(stderr=f"java.io.FileNotFoundException: {path}: open failed: {exc.strerror or exc}\n".encode(),
                             exit_code=1)
    return ok(done)
