"""Secrets never reach a log line: the run's redaction covers the process's logging."""

from __future__ import annotations

import logging
import threading

import pytest
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


class _Stream(logging.StreamHandler):  # type: ignore[type-arg]
    """Keeps the lines a formatter made, and the records it could not format."""

    def __init__(self, formatter: logging.Formatter) -> None:
        import io

        super().__init__(io.StringIO())
        self.setFormatter(formatter)
        self.failed: list[logging.LogRecord] = []

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 - logging's name
        self.failed.append(record)

    @property
    def text(self) -> str:
        return self.stream.getvalue()  # type: ignore[no-any-return]


def test_uvicorn_access_lines_stay_whole_while_a_run_hides_its_secrets():
    """uvicorn's ``AccessFormatter`` unpacks ``record.args`` (client, method, path, version,
    status): a redaction that empties them loses every access line of the process."""
    from uvicorn.logging import AccessFormatter

    logger = logging.getLogger("test.redact.access")
    logger.setLevel(logging.INFO)
    keep = _Stream(AccessFormatter('%(client_addr)s - "%(request_line)s" %(status_code)s', use_colors=False))
    logger.addHandler(keep)
    other, plain = logging.getLogger("test.redact.plain"), _Stream(logging.Formatter("%(message)s"))
    other.setLevel(logging.INFO)
    other.addHandler(plain)
    line = '%s - "%s %s HTTP/%s" %d'
    try:
        with redacted_logs(Redactor(["planner-key-77", "Quokka7731"])):
            logger.info(line, "127.0.0.1:50000", "GET", "/v1/tasks/3", "1.1", 200)
            logger.info(line, "127.0.0.1:50001", "GET", "/v1/tasks?q=Quokka7731", "1.1", 404)
            other.info("%(who)s typed %(what)s", {"who": "run 3", "what": "Quokka7731"})
            other.info("joined: %s%s", "Quokka", "7731")  # shows only once put together
            other.info("status %d of %s", 200, "run 3")
    finally:
        logger.removeHandler(keep)
        other.removeHandler(plain)
    assert keep.failed == [] and plain.failed == []
    assert keep.text.splitlines() == ['127.0.0.1:50000 - "GET /v1/tasks/3 HTTP/1.1" 200 OK',
                                      f'127.0.0.1:50001 - "GET /v1/tasks?q={REDACTED} HTTP/1.1" 404 Not Found']
    assert plain.text.splitlines() == [f"run 3 typed {REDACTED}", f"joined: {REDACTED}", "status 200 of run 3"]


@pytest.mark.slow
def test_a_serve_access_log_through_a_run_with_a_secret(tmp_path, adb_server, sim_phones, llm_server):
    """``mobile-agent serve --log-level info`` (a real uvicorn, its own logging config) while a
    task types a ``{{secret:pin}}`` with a planner API key set: every request made during the
    run has its access line, whole; the one whose address holds the secret shows it redacted;
    no "Logging error" anywhere in the process's output."""
    import time

    import httpx

    from tests.server_fixtures import TaggedPlanner, free_port, serve_process, waits

    secret = "Wombat4417Qx"
    (phone,) = sim_phones(1)
    planner = TaggedPlanner(plans={"t-log": ["Open App (Notes)", "Type ({{secret:pin}})", *waits(10)]},
                            delay_s={"t-log": 0.3})
    llm_server.script([], default=planner)
    config = tmp_path / "service.toml"
    config.write_text(f"""
[adb]
server_port = {adb_server.port}
[server]
database_url = "sqlite:///{tmp_path / 'service.sqlite3'}"
devices = ["{phone.serial}"]
device_refresh_s = 0.5
[agent]
output_dir = "{tmp_path / 'runs'}"
completion_check = false
settle_timeout_s = 0.6
settle_interval_s = 0.1
[agent.named_secrets]
pin = "{secret}"
[planner]
base_url = "{llm_server.base_url}"
api_key = "planner-key-5531"
timeout_s = 20.0
max_retries = 1
image_long_side = 512
""")
    port, log = free_port(), tmp_path / "serve.log"
    process = serve_process(config, port, log, log_level="info")
    client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10)
    try:
        deadline = time.monotonic() + 60
        task = client.post("/v1/tasks", json={"instruction": "[t-log] note the pin {{secret:pin}}", "max_steps": 12})
        assert task.status_code == 202, task.text
        task_id = task.json()["id"]
        while planner.calls.get("t-log", 0) < 3:  # past the typing
            assert time.monotonic() < deadline, "the run did not get past the typing"
            time.sleep(0.1)
        asked = 0
        for _ in range(5):
            assert client.get(f"/v1/tasks/{task_id}").json()["status"] == "running"
            assert client.get(f"/v1/tasks/{task_id}", params={"probe": secret}).status_code == 200
            asked += 2
        assert client.get(f"/v1/tasks/{task_id}").json()["status"] == "running"  # all of them during the run
        asked += 1
        while client.get(f"/v1/tasks/{task_id}").json()["status"] == "running":
            assert time.monotonic() < deadline + 60
            time.sleep(0.2)
    finally:
        client.close()
        process.terminate()
        process.wait(20)
    text = log.read_text()
    assert "Logging error" not in text and "Traceback" not in text, text[-3000:]
    assert secret not in text and "planner-key-5531" not in text
    during = [ln for ln in text.splitlines() if f'"GET /v1/tasks/{task_id}' in ln]
    assert len(during) >= asked, text[-3000:]
    probes = [ln for ln in during if "probe=" in ln]
    assert len(probes) == 5 and all(f"probe={REDACTED} HTTP/1.1" in ln for ln in probes), probes


def test_a_part_of_a_secret_a_screen_showed_is_redacted_from_records_too():
    """OCR of a field that scrolls reads the end of a long value into a step's feedback (the
    closest texts of a text not found): the run's records must not keep that part either; the
    API key is redacted where it appears whole."""
    settings = Settings(agent={"named_secrets": {"pin": SecretStr("Quokka7731ZzPangolin4896")}},
                        planner={"api_key": SecretStr("sk-live-key-123")})
    redact = Redactor.from_settings(settings)
    step = {"feedback": "Text 'Notes' not found; closest texts seen: 'golin4896', 'Title'", "by": "sk-live-key-123"}
    assert redact(step) == {"feedback": f"Text 'Notes' not found; closest texts seen: {REDACTED} 'Title'",
                            "by": REDACTED}
    assert redact.text("a sk-live word") == "a sk-live word"  # a part of the key is no secret on a screen
