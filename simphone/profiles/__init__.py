"""Device profiles: what one kind of real phone prints, as data.

A profile is a TOML file in this folder (``pixel7-14.toml`` is the profile
``pixel7-14``). It names the phone (``getprop``), its screen (natural size, density,
``wm`` overrides, rotation, displays), its features (``missing_programs``,
``hardware_keys``, a keyguard at boot, how ``uiautomator dump`` answers) and, under
``[outputs.NAME]``, the text of each command as a ``string.Template`` (``$package``,
``${width}`` ...) with the ``source`` of the real sample it was taken from. The shell
commands fill the templates from the phone's state; no command knows which phone it runs
on. ``simphone/profiles/README.md`` lists the template variables.

TOML because the samples are multi-line text that must stay byte-exact (literal
strings); ``tomllib`` is in the standard library from Python 3.11, ``tomli`` (the same
parser, a dependency on 3.10) before.

May import: the standard library (``tomli`` on Python 3.10).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from string import Template
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

__all__ = ["DEFAULT_PROFILE", "Display", "Output", "Profile", "load_profile", "profile_names"]

DEFAULT_PROFILE = "simphone"
_HERE = Path(__file__).resolve().parent
_UI_DUMP_MODES = ("ok", "idle-timeout", "null-root", "stale")


@dataclass(frozen=True)
class Output:
    """One command's output: a template and where the real sample comes from."""

    template: Template
    source: str
    exit_code: int = 0
    stream: str = "stdout"  # or "stderr"

    def render(self, values: dict[str, Any]) -> str:
        return self.template.substitute(values)


@dataclass(frozen=True)
class Display:
    """A further physical display (a foldable's second screen): shown in ``dumpsys
    SurfaceFlinger --display-id`` / ``dumpsys display``, never rendered."""

    physical_id: str
    logical_id: int
    width: int
    height: int
    state: str


@dataclass(frozen=True)
class Profile:
    name: str
    summary: str
    reproduces: str
    props: dict[str, str]
    props_source: str
    natural_width: int
    natural_height: int
    density: int
    override_size: tuple[int, int] | None
    override_density: int | None
    rotation: int
    physical_id: str
    extra_displays: tuple[Display, ...]
    raw_header_words: int
    lock_screen: bool
    keyguard_window: str
    hardware_keys: bool
    missing_programs: frozenset[str]
    ui_dump: str
    adb_features: tuple[str, ...] | None  # None: what adbd of Android 7+ announces
    ime_bind_ms: int  # how long a newly selected input method takes to bind
    settings: dict[str, dict[str, str]]
    outputs: dict[str, Output] = field(repr=False)

    @property
    def model(self) -> str:
        return self.props["ro.product.model"]

    @property
    def screen_size(self) -> tuple[int, int]:
        """Size of the rendered screen in the natural orientation (the override when set)."""
        return self.override_size or (self.natural_width, self.natural_height)

    def output(self, name: str) -> Output | None:
        return self.outputs.get(name)


def profile_names() -> list[str]:
    return sorted(p.stem for p in _HERE.glob("*.toml"))


@cache
def load_profile(name: str) -> Profile:
    """The profile called ``name`` (``ValueError`` with the known names otherwise)."""
    if not isinstance(name, str) or name not in profile_names():
        raise ValueError(f"unknown device profile {name!r}; known: {', '.join(profile_names())}")
    path = _HERE / f"{name}.toml"
    with path.open("rb") as fh:
        data = tomllib.load(fh)
    try:
        return _build(name, data)
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"device profile {path.name} is malformed: {exc}") from exc


def _build(name: str, data: dict[str, Any]) -> Profile:
    screen = data["screen"]
    features = data.get("features", {})
    props = data["getprop"]
    outputs = {}
    for key, spec in data.get("outputs", {}).items():
        if not spec.get("source"):
            raise ValueError(f"output {key!r} names no source")
        outputs[key] = Output(Template(spec["text"]), spec["source"], int(spec.get("exit_code", 0)),
                              spec.get("stream", "stdout"))
    override = screen.get("override_size")
    ui_dump = features.get("ui_dump", "ok")
    if ui_dump not in _UI_DUMP_MODES:
        raise ValueError(f"features.ui_dump must be one of {_UI_DUMP_MODES}, got {ui_dump!r}")
    header = int(screen.get("raw_header_words", 4))
    if header not in (3, 4):
        raise ValueError("screen.raw_header_words is 3 (Android <= 8) or 4")
    return Profile(
        name=name,
        summary=data["summary"],
        reproduces=data["reproduces"],
        props={k: str(v) for k, v in props["values"].items()},
        props_source=props["source"],
        natural_width=int(screen["width"]),
        natural_height=int(screen["height"]),
        density=int(screen["density"]),
        override_size=(int(override[0]), int(override[1])) if override else None,
        override_density=int(screen["override_density"]) if "override_density" in screen else None,
        rotation=int(screen.get("rotation", 0)) % 4,
        physical_id=str(screen.get("physical_id", "0")),
        extra_displays=tuple(Display(str(d["physical_id"]), int(d["logical_id"]), int(d["width"]),
                                     int(d["height"]), str(d["state"])) for d in screen.get("extra_displays", [])),
        raw_header_words=header,
        lock_screen=bool(features.get("lock_screen", False)),
        keyguard_window=str(features.get("keyguard_window", "NotificationShade")),
        hardware_keys=bool(features.get("hardware_keys", True)),
        missing_programs=frozenset(features.get("missing_programs", [])),
        ui_dump=ui_dump,
        adb_features=tuple(features["adb_features"]) if "adb_features" in features else None,
        ime_bind_ms=int(features.get("ime_bind_ms", 0)),
        settings={ns: {k: str(v) for k, v in table.items()} for ns, table in data.get("settings", {}).items()},
        outputs=outputs,
    )
