"""Secrets never reach a log line: the run's redaction covers the process's logging."""

from __future__ import annotations

import logging
import threading

from pydantic import SecretStr

from mobile_agent.agent.parts import TimedLocator
from mobile_agent.agent.redact import REDACTED, Redactor, redacted_logs
from mobile_agent.agent.session import carry_out
from mobile_agent.settings import Settings


class _Keep(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []
        self.setFormatter(logging.Formatter("%(name)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


def _kept(name: str) -> tuple[logging.Logger, _Keep]:
    logger = logging.getLogger(name)
    logger.setLevel(logging.DEBUG)
    keep = _Keep()
    logger.addHandler(keep)  # a handler added by the host program, after the factory was set
    return logger, keep


def test_messages_arguments_and_tracebacks_are_redacted_only_while_the_run_lasts():
    logger, keep = _kept("test.redact.one")
    with redacted_logs(Redactor(["hunter2-pass"])):
        logger.info("typing %s into the field", "hunter2-pass")
        logger.info("a dict %s", {"password": "hunter2-pass"})
        try:
            raise ValueError("bad value hunter2-pass")
        except ValueError:
            logger.exception("it failed")
    logger.info("after the run: %s", "hunter2-pass")
    text = "\n".join(keep.lines)
    assert text.count(REDACTED) == 3 + 1  # the traceback's last line carries it too
    assert "hunter2-pass" not in "\n".join(keep.lines[:3])
    assert keep.lines[-1].endswith("after the run: hunter2-pass")  # the block ended: nothing to hide


def test_overlapping_runs_in_threads_each_hide_their_own_secrets():
    logger, keep = _kept("test.redact.two")
    inside = threading.Barrier(2)
    done = threading.Barrier(2)

    def run(secret: str) -> None:
        with redacted_logs(Redactor([secret])):
            inside.wait(timeout=10)
            logger.info("values alpha-secret-1 and beta-secret-2")
            done.wait(timeout=10)

    threads = [threading.Thread(target=run, args=(s,)) for s in ("alpha-secret-1", "beta-secret-2")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=20)
    assert len(keep.lines) == 2
    assert all("secret-" not in line for line in keep.lines), keep.lines
    logger.info("alpha-secret-1")
    assert keep.lines[-1].endswith("alpha-secret-1")


class _FailingBody:
    """A run whose device cannot be opened, with the secret in the error."""

    device = None
    max_steps = 3

    def open(self) -> object:
        raise RuntimeError("adb refused the password wX9-topsecret")


def test_a_runs_unexpected_error_is_logged_without_its_secret(tmp_path):
    _, keep = _kept("mobile_agent.agent.session")
    settings = Settings(agent={"secrets": [SecretStr("wX9-topsecret")]})
    result = carry_out(settings, _FailingBody(), instruction="log in", mode="scripted",  # type: ignore[arg-type]
                       locator=TimedLocator(object()), on_event=None, output_dir=tmp_path, cancel=None)  # type: ignore[arg-type]
    assert result.status.value == "error"
    logged = "\n".join(keep.lines)
    assert "ended by an unexpected error" in logged and REDACTED in logged
    assert "wX9-topsecret" not in logged
    assert "wX9-topsecret" not in result.reason
