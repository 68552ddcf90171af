"""toybox commands the simulated phone needs beside its apps: `pkill` and `rm`.

Android's /system/bin/pkill and /system/bin/rm are toybox (toys/posix/ps.c, toys/posix/rm.c):

- `pkill [-SIGNAL|-s SIGNAL] PATTERN...`: signals the running programs whose name matches a
  PATTERN (a regular expression); here the only long-running programs are recordings
  (`simphone.screenrecord`). Exit 0 when one matched, 1 when none did.
- `rm [-fRr] FILE...`: removes files from the phone's filesystem (`-r`/`-R` directories
  too); a missing file is `rm: FILE: No such file or directory` and exit 1, unless `-f`.

May import: the standard library, `simphone.commands`, `simphone.types`, `simphone.screenrecord`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from simphone.commands import command, fail
from simphone.screenrecord import running
from simphone.types import CommandResult

if TYPE_CHECKING:
    from simphone.phone import PhoneModel as Phone

__all__: list[str] = []

_SIGNALS = {"HUP": 1, "INT": 2, "QUIT": 3, "KILL": 9, "USR1": 10, "USR2": 12, "TERM": 15}


def _signal_number(text: str) -> int | None:
    name = text.upper().removeprefix("SIG")
    if name.isdigit():
        return int(name)
    return _SIGNALS.get(name)


@command("pkill")
def pkill(phone: Phone, args: list[str]) -> CommandResult:
    number = 15  # SIGTERM, as kill's default
    patterns: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-s", "-l") and i + 1 < len(args):
            found = _signal_number(args[i + 1])
            if found is None:
                return fail(f"pkill: unknown signal '{args[i + 1]}'\n", 1)
            number, i = found, i + 2
            continue
        if arg.startswith("-") and len(arg) > 1:
            found = _signal_number(arg[1:])
            if found is None:
                return fail(f"pkill: Unknown option '{arg[1:]}'\n", 1)
            number = found
        else:
            patterns.append(arg)
        i += 1
    if not patterns:
        return fail("pkill: Need 1 argument\n", 1)
    matched = False
    for recording in running(phone):
        if any(re.search(p, recording.name) for p in patterns):
            recording.signal(number)
            matched = True
    return CommandResult(exit_code=0 if matched else 1)


@command("rm")
def rm(phone: Phone, args: list[str]) -> CommandResult:
    force = recursive = False
    files: list[str] = []
    for arg in args:
        if arg.startswith("-") and len(arg) > 1 and not files:
            letters = set(arg[1:])
            if not letters <= set("fRrvi"):
                return fail(f"rm: Unknown option '{arg[1:]}'\n", 1)
            force = force or "f" in letters
            recursive = recursive or bool(letters & {"r", "R"})
        else:
            files.append(arg)
    if not files:
        return fail("rm: Needs 1 argument\n", 1)
    errors = []
    for name in files:
        path = name if name.startswith("/") else "/" + name
        try:
            if phone.fs.is_dir(path) and not recursive:
                errors.append(f"rm: {name}: Is a directory\n")
                continue
            phone.fs.remove(path, recursive=recursive)
        except FileNotFoundError:
            if not force:
                errors.append(f"rm: {name}: No such file or directory\n")
        except OSError as exc:
            errors.append(f"rm: {name}: {exc.strerror or exc}\n")
    return CommandResult(stderr="".join(errors).encode(), exit_code=1 if errors else 0)
