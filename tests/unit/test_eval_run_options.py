"""`eval mobile-eval`, `eval families` and `data collect` share one set of run options
(``eval.mobile_eval.cli.add_run_options``, argparse's public API): each command parses them
alike, and --force / --new stay exclusive in every one (the families' copy of mobile-eval's
actions dropped their group: `--force --new` was taken)."""

from __future__ import annotations

import pytest

from mobile_agent.cli import build_parser

COMMANDS = [["eval", "mobile-eval"], ["eval", "families"], ["data", "collect"]]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c))
def test_each_run_command_parses_the_shared_run_options(command: list[str]) -> None:
    args = build_parser().parse_args([*command, "-s", "emulator-5554", "-s", "emulator-5556", "--model", "m",
                                      "--base-url", "http://127.0.0.1:9/v1", "--level", "2", "--max-steps", "7",
                                      "--cache", "--judge", "mllm", "--label", "x", "--new"])
    assert args.device == ["emulator-5554", "emulator-5556"] and args.model == "m"
    assert args.base_url == "http://127.0.0.1:9/v1" and args.level == [2] and args.max_steps == 7
    assert args.cache is True and args.judge == "mllm" and args.label == "x" and args.new and not args.force
    defaults = build_parser().parse_args(command)
    assert defaults.cache is None and defaults.judge == "auto" and not defaults.script_reference


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c))
def test_force_and_new_are_exclusive_in_every_run_command(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args([*command, "--force", "--new"])
    assert exited.value.code == 2
    assert "--new: not allowed with argument --force" in capsys.readouterr().err
