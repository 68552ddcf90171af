"""Free loopback ports for the tests' servers."""

from __future__ import annotations

from mobile_agent.ports import quiet_port


def free_port() -> int:
    """A free TCP port on 127.0.0.1 for a server a test starts next (uvicorn, PostgreSQL, a
    private adb server, a scripted model server, chromium's debugging port): below the kernel's
    ephemeral range (``mobile_agent.ports.quiet_port``), where no outgoing connection of this or
    another process can take it before the server binds it, and outside 5555–5585 (the adb
    server takes a listener there for an emulator, one more device in every test)."""
    return quiet_port()
