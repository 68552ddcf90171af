"""JUnit XML of a flow suite, in the format CI systems read.

The element and attribute set is the one of the JUnit schema Jenkins' xUnit plugin
publishes (``junit-10.xsd``, jenkinsci/xunit-plugin, MIT; also what pytest's own
``--junitxml`` is tested against): ``testsuites`` > ``testsuite`` (name, tests, failures,
errors, skipped, time, timestamp, hostname) > ``testcase`` (name, classname, file, time)
with ``failure`` / ``error`` (message, type) and ``system-out``. A failed flow's
screenshot, its report and its video are named in ``system-out`` as
``[[ATTACHMENT|/absolute/path]]`` lines (the convention of Jenkins' JUnit Attachments
plugin) after plain ``report: PATH`` / ``screenshot: PATH`` / ``video: PATH`` lines for
any other reader.

May import: the standard library, this package's runner records.
"""

from __future__ import annotations

import socket
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from mobile_agent.testing.runner import ERROR, FAILED, FlowResult, SuiteResult

__all__ = ["junit_xml", "write_junit"]

SUITE_NAME = "mobile-agent flows"


def _seconds(value: float) -> str:
    return f"{max(0.0, value):.3f}"


def junit_xml(suite: SuiteResult, name: str = SUITE_NAME) -> bytes:
    """The suite as JUnit XML (UTF-8 bytes with the XML declaration)."""
    root = ET.Element("testsuites", {
        "name": name, "tests": str(len(suite.flows)), "failures": str(suite.failed),
        "errors": str(suite.errors), "time": _seconds(suite.seconds),
    })  # fmt: skip
    testsuite = ET.SubElement(root, "testsuite", {
        "name": name, "tests": str(len(suite.flows)), "failures": str(suite.failed), "errors": str(suite.errors),
        "skipped": "0", "time": _seconds(suite.seconds),
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(suite.started_at)),
        "hostname": socket.gethostname() or "localhost",
    })  # fmt: skip
    for flow in suite.flows:
        testsuite.append(_testcase(flow))
    ET.indent(root)
    body: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return body


def _testcase(flow: FlowResult) -> ET.Element:
    # junit-10.xsd's testcase has no "file" attribute: the flow's file is named in system-out
    case = ET.Element("testcase", {"name": flow.name, "classname": _classname(flow), "time": _seconds(flow.seconds)})
    if flow.status in (FAILED, ERROR):
        tag = "failure" if flow.status == FAILED else "error"
        element = ET.SubElement(case, tag, {"message": flow.message[:1000], "type": f"flow {tag}"})
        element.text = "\n".join(
            f"step {s.number} {s.kind}: {'ok' if s.passed else 'FAILED'} - {s.text}\n    {s.message}" for s in flow.steps
        )
    lines = [f"flow: {flow.source}"] if flow.source else []
    lines += [f"report: {flow.report_path.resolve()}", f"trajectory: {flow.trajectory_dir.resolve()}"]
    attachments = [flow.report_path]
    shot = flow.failure_screenshot
    if shot is not None:
        lines.append(f"screenshot: {shot.resolve()}")
        attachments.append(shot)
    if flow.video is not None:
        lines.append(f"video: {flow.video.resolve()}")
        attachments.append(flow.video)
    if flow.cache_note:
        lines.append(flow.cache_note)
    lines += [f"[[ATTACHMENT|{Path(p).resolve()}]]" for p in attachments]
    ET.SubElement(case, "system-out").text = "\n".join(lines)
    return case


def _classname(flow: FlowResult) -> str:
    if flow.source:
        return "flows." + Path(flow.source).stem.replace(".", "_")
    return "flows"


def write_junit(suite: SuiteResult, path: Path, name: str = SUITE_NAME) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(junit_xml(suite, name))
    return path
