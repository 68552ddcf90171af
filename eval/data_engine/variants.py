"""Augmentation that is free on a phone: the same instance on other screens, themes and phones.

A variant is a few adb shell commands run after the reset and before the family's own
set-up, or a phone to run on:

- ``themes``: ``light`` and ``dark`` (``cmd uimode night no|yes``, AOSP UiModeManagerShellCommand);
  a family about the theme (its validator lets the theme change) keeps its own set-up only;
- ``sizes``: the phone as it is (``wm size reset``) and each ``--sizes WxH`` (``wm size WxH``,
  AOSP WindowManagerShellCommand: the display draws and takes touches at that size);
- ``profiles``: every phone given with ``--device`` (each a real phone model, or a simulated
  phone playing one: ``simphone serve --profile NAME``) runs every instance, named after
  its ``ro.product.model``.

Axes combine (themes x sizes x profiles). A variant's task id is the instance's with
``-v-<variant>`` before the level (``notes-create-s3-v-dark-720x1600-1``), so results,
resume and the export keep variants apart: the screenshots differ, the runs are not
duplicates.

May import: eval.families, eval.mobile_eval (schema), the standard library.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from eval.families.catalog import instance_by_id
from eval.mobile_eval.schema import EvalTask

__all__ = ["AXES", "Variant", "expand", "parse_sizes", "phone_variants", "task_for_id", "variant_of"]

AXES = ("themes", "sizes", "profiles")
_VARIANT_ID = re.compile(r"^(?P<base>.+-s\d+)-v-(?P<variant>[a-z0-9]+(?:-[a-z0-9]+)*)-(?P<level>[123])$")


@dataclass(frozen=True)
class Variant:
    """One way to run an instance: its name in task ids ("" = as the phone is), the shell
    commands before the family's set-up, and the phone it must run on (None: any)."""

    name: str = ""
    setup: tuple[tuple[str, ...], ...] = ()
    device: str | None = None
    axis: str = ""

    def plus(self, other: Variant) -> Variant:
        name = "-".join(n for n in (self.name, other.name) if n)
        return Variant(name, self.setup + other.setup, other.device or self.device, "+".join(
            a for a in (self.axis, other.axis) if a))


THEMES = (Variant("light", (("cmd", "uimode", "night", "no"),), axis="themes"),
          Variant("dark", (("cmd", "uimode", "night", "yes"),), axis="themes"))  # fmt: skip


def parse_sizes(text: str) -> list[tuple[int, int]]:
    """``720x1600,1440x3200`` → [(720, 1600), (1440, 3200)]; a ValueError names a bad one."""
    sizes = []
    for item in (t.strip() for t in text.split(",") if t.strip()):
        match = re.fullmatch(r"(\d{3,4})x(\d{3,4})", item)
        if match is None:
            raise ValueError(f"--sizes wants WxH[,WxH] in pixels (e.g. 720x1600), got {item!r}")
        sizes.append((int(match[1]), int(match[2])))
    return sizes


def size_variants(sizes: Sequence[tuple[int, int]]) -> list[Variant]:
    return [Variant("", (("wm", "size", "reset"),), axis="sizes")] + [
        Variant(f"{w}x{h}", (("wm", "size", f"{w}x{h}"),), axis="sizes") for w, h in sizes
    ]


def phone_variants(phones: Sequence[tuple[str, str]]) -> list[Variant]:
    """One variant per phone (serial, model): named after the model, numbered when two share one."""
    slugs = [re.sub(r"[^a-z0-9]+", "-", model.lower()).strip("-") or "phone" for _, model in phones]
    names = [f"{s}-{slugs[:i].count(s) + 1}" if slugs.count(s) > 1 else s for i, s in enumerate(slugs)]
    return [Variant(name, (), serial, axis="profiles") for (serial, _), name in zip(phones, names, strict=True)]


def _changes_theme(task: EvalTask) -> bool:
    return "theme" not in task.validator.unchanged


def expand(tasks: Iterable[EvalTask], axes: Sequence[str], *, sizes: Sequence[tuple[int, int]] = ((720, 1600),),
           phones: Sequence[tuple[str, str]] = ()) -> tuple[list[EvalTask], dict[str, str]]:  # fmt: skip
    """Every task on every combination of the axes' variants; the pinned phones by task id."""
    unknown = [a for a in axes if a not in AXES]
    if unknown:
        raise ValueError(f"unknown augmentation {', '.join(unknown)}; one of {', '.join(AXES)}")
    out: list[EvalTask] = []
    pinned: dict[str, str] = {}
    for task in tasks:
        choices: list[Sequence[Variant]] = []
        for axis in AXES:
            if axis not in axes:
                continue
            if axis == "themes":
                choices.append(THEMES if not _changes_theme(task) else (Variant(),))
            elif axis == "sizes":
                choices.append(size_variants(sizes))
            else:
                choices.append(phone_variants(phones) or (Variant(),))
        for combo in itertools.product(*choices):
            variant = Variant()
            for part in combo:
                variant = variant.plus(part)
            one = with_variant(task, variant)
            out.append(one)
            if variant.device is not None:
                pinned[one.id] = variant.device
    return out, pinned


def with_variant(task: EvalTask, variant: Variant) -> EvalTask:
    """The task run as ``variant``: its commands first, then the family's own set-up."""
    task_id = task.id if not variant.name else f"{task.id[:-2]}-v-{variant.name}-{task.level}"
    return task.model_copy(update={"id": task_id, "setup": [list(c) for c in variant.setup] + list(task.setup)})


def variant_of(task_id: str) -> str:
    """``notes-create-s3-v-dark-1`` → ``dark``; ``""`` for an instance as the phone is."""
    match = _VARIANT_ID.match(task_id)
    return match["variant"] if match else ""


def task_for_id(task_id: str) -> EvalTask | None:
    """The family instance a (variant) task id names, under that id; None for another id."""
    match = _VARIANT_ID.match(task_id)
    if match is None:
        return instance_by_id(task_id)
    base = instance_by_id(f"{match['base']}-{match['level']}")
    return base.model_copy(update={"id": task_id}) if base is not None else None
