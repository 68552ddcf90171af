"""`mobile-agent test FLOWS...`: run test flows (YAML) on a phone, one report per flow.

Exit codes:

    0  every flow passed
    1  a flow failed (an assertion, a run that did not complete) or ended in an error
    2  usage error: a flow file that does not load, no phone, an ambiguous phone
    3  the phone could not be opened, or another run holds it (one phone, one run)

Each flow gets a trajectory folder with its report.html (and video.mp4 with --record);
the suite's summary is printed and written as suite.json in the output folder; --junit
writes JUnit XML for CI.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mobile_agent.apps.platforms import PlatformPinError
from mobile_agent.errors import ConfigError

if TYPE_CHECKING:
    from mobile_agent.device import Platform
    from mobile_agent.operations.context import AgentDevice
    from mobile_agent.settings import Settings
    from mobile_agent.testing.flows import Flow

EXIT_FAILED, EXIT_USAGE, EXIT_DEVICE = 1, 2, 3
FLOW_SUFFIXES = (".yaml", ".yml")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "test",
        help="run test flows (YAML: run / do / assert / assert_visible / extract / wait_for steps)",
        description="Run test flows on a phone: each flow's steps in order, one report per flow, a suite summary.",
        epilog=__doc__.split("Exit codes:")[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("flows", nargs="+", type=Path, metavar="FLOW", help="flow files, or folders of *.yaml flows")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--serial", "-s", help="the phone's serial")
    where.add_argument("--device", choices=["any"],
                       help="any: the first attached phone that is ready and that no other run holds")
    parser.add_argument("--junit", type=Path, metavar="FILE", help="write JUnit XML here")
    parser.add_argument("--record", action="store_true", help="record a video of each flow (video.mp4 beside its report)")
    parser.add_argument("--output", "-o", type=Path, metavar="DIR", help="trajectories folder (default: runs/)")
    parser.add_argument("--var", action="append", default=[], metavar="NAME=VALUE", help="set a flow variable (repeatable)")
    parser.add_argument("--no-cache", action="store_true", help="no plan cache: every run: step asks the model")
    parser.add_argument("--model", help="model name for run / assert / extract / wait_for steps")
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint")
    parser.add_argument("--api-key", help="API key (prefer MOBILE_AGENT_PLANNER__API_KEY)")
    parser.add_argument("--json", action="store_true", help="print the suite's result as one JSON object")
    parser.set_defaults(func=test_command)


def flow_files(paths: list[Path]) -> list[Path]:
    """The flow files named, folders expanded to their *.yaml / *.yml files (sorted)."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files += sorted(p for p in path.iterdir() if p.suffix in FLOW_SUFFIXES and p.is_file())
        else:
            files.append(path)
    return files


def _variables(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise ConfigError(f"--var takes NAME=VALUE, got {pair!r}")
        out[name.strip()] = value
    return out


def test_command(args: argparse.Namespace) -> int:
    from mobile_agent.settings import load_settings
    from mobile_agent.testing.flows import load_flow

    err = sys.stderr
    try:
        variables = _variables(args.var)
        overrides: dict[str, Any] = {
            "adb.serial": args.serial, "planner.model": args.model, "planner.base_url": args.base_url,
            "planner.api_key": args.api_key, "agent.output_dir": str(args.output) if args.output else None,
        }  # fmt: skip
        settings = load_settings(args.config, overrides)
        files = flow_files(args.flows)
        if not files:
            raise ConfigError("no flow files found in " + ", ".join(str(p) for p in args.flows))
        flows: list[Flow] = [load_flow(path) for path in files]
        from mobile_agent.testing import flow_pins

        pins = flow_pins(flows, variables)  # the app ids of one platform their do: steps open
        platform = pins.platform()  # PlatformPinError: both kinds' ids, a usage error
    except (ConfigError, PlatformPinError) as exc:
        print(f"mobile-agent test: {exc.message}", file=err)
        return EXIT_USAGE

    from mobile_agent.cli.pinned import pinned_serial
    from mobile_agent.device import close_phone, open_phone
    from mobile_agent.errors import DeviceError, DeviceNotFoundError, MultipleDevicesError

    try:
        serial = None if args.device == "any" else pinned_serial(settings, pins)
        if args.device == "any":
            chosen = _any_phone(settings, platform)
            if chosen is None:
                if platform is None:
                    print("mobile-agent test: no phone is attached and ready", file=err)
                else:
                    print(f"mobile-agent test: {pins.no_phone().message}", file=err)
                return EXIT_USAGE
            serial = chosen
        refused = pins.on_device(serial) if serial else None
        if refused is not None:  # Open App (com.android.settings) on an iPhone: as REST refuses it
            print(f"mobile-agent test: {refused.message}", file=err)
            return EXIT_USAGE
        device = open_phone(settings, serial)  # ios:NAME: an iPhone of ios.devices (docs/ios.md)
    except (DeviceNotFoundError, MultipleDevicesError, PlatformPinError) as exc:
        print(f"mobile-agent test: {exc.message}", file=err)
        return EXIT_USAGE
    except DeviceError as exc:
        print(f"mobile-agent test: {exc.message}", file=err)
        return EXIT_DEVICE
    refused = pins.on_device(device.serial)  # the only attached phone, when none was named
    if refused is not None:
        close_phone(device)
        print(f"mobile-agent test: {refused.message}", file=err)
        return EXIT_USAGE

    # one phone, one run: a phone a REST task, an MCP session or `mobile-agent run` holds is refused
    from mobile_agent.device import PhoneLease
    from mobile_agent.errors import PhoneBusyError

    lease = PhoneLease(settings.adb, device.serial, f"mobile-agent test (pid {os.getpid()})")
    try:
        lease.acquire()
    except PhoneBusyError as exc:
        close_phone(device)
        print(f"mobile-agent test: {exc.message}; run again when it is free", file=err)
        return EXIT_DEVICE
    try:
        return _run_flows(args, settings, device, flows, variables)
    finally:
        lease.release()
        close_phone(device)  # the phone it opened (an iPhone's WDA connections, a USB iPhone's forward)


def _any_phone(settings: Settings, platform: Platform | None) -> str | None:
    """``--device any``: the first ready phone that no other run holds (a REST task, MCP,
    `mobile-agent run`: their leases), else the first ready one (its lease then says who holds
    it), else None. Android phones first, then the iPhones (``ios.devices`` and USB), asked only
    when the flows open an iPhone's app by its id or no Android phone is free; ``platform`` (the
    flows' app ids, ``flow_pins``) keeps to phones of that platform."""
    from mobile_agent.device import lease_holder, list_devices, list_iphones

    ready: list[str] = []
    if platform != "ios":
        ready = [d.serial for d in list_devices(settings.adb) if d.state == "device"]
    free = [s for s in ready if lease_holder(settings.adb, s) is None]
    if not free and platform != "android":
        iphones = [p.serial for p in list_iphones(settings.ios) if p.ready]
        ready += iphones
        free = [s for s in iphones if lease_holder(settings.adb, s) is None]
    chosen = free or ready
    return chosen[0] if chosen else None


def _run_flows(args: argparse.Namespace, settings: Settings, device: AgentDevice, flows: list[Flow],
               variables: dict[str, str]) -> int:  # fmt: skip
    from mobile_agent.testing.junit import write_junit
    from mobile_agent.testing.runner import FlowResult, FlowRunner

    err = sys.stderr
    out = sys.stderr if args.json else sys.stdout
    try:
        runner = FlowRunner(settings, device, record=args.record, cache=not args.no_cache, variables=variables)
    except ConfigError as exc:
        print(f"mobile-agent test: {exc.message}", file=err)
        return EXIT_USAGE
    print(f"running {len(flows)} flow{'s' if len(flows) != 1 else ''} on {device.serial}", file=out)

    def show(result: FlowResult) -> None:
        mark = {"passed": "PASS", "failed": "FAIL", "error": "ERROR"}[result.status]
        print(f"{mark}  {result.name}  ({len(result.steps)} steps, {result.seconds:.1f} s)", file=out)
        if result.cache_note:
            print(f"      {result.cache_note}", file=out)
        if not result.passed:
            print(f"      {result.message}", file=out)
            shot = result.failure_screenshot
            if shot is not None:
                print(f"      screenshot: {shot.resolve()}", file=out)
        print(f"      report: {result.report_path.resolve()}", file=out)
        if result.video is not None:
            print(f"      video: {result.video.resolve()}", file=out)
        out.flush()

    suite = runner.run_suite(flows, on_result=show)
    summary_path = runner.output_dir / "suite.json"
    summary_path.parent.mkdir(parents=True, exist_ok=True)
    summary_path.write_text(json.dumps(suite.to_dict(), indent=2, ensure_ascii=False, default=str), encoding="utf-8")
    print(f"suite: {suite.summary()}", file=out)
    print(f"summary: {summary_path.resolve()}", file=out)
    if args.junit is not None:
        print(f"junit: {write_junit(suite, args.junit).resolve()}", file=out)
    if args.json:
        print(json.dumps(suite.to_dict(), ensure_ascii=False, default=str))
    return 0 if suite.passed == len(suite.flows) else EXIT_FAILED
