"""`mobile-agent data`: collect verified runs of the task families and export them.

    mobile-agent data collect [eval families options] [--judges ...] -o runs/data   # run, verify, export to runs/data/dataset
        [--augment themes,sizes,profiles] [--sizes WxH[,WxH]]   # each instance on each variant
    mobile-agent data verify RUN_DIR [--judges ...] [--again]                      # verify a finished families run
    mobile-agent data export RUN_DIR [-o OUT]                                      # export a finished families run
    mobile-agent data score DATASET [--split validation] [--model ...]             # a planner's step rates, gold history
        [--dialect NAME[,NAME]] [--format llava,sharegpt]      # (collect takes them too, for its export)

Every run is verified by the phone's state validator and the rule pre-check (loops,
pointless actions); ``--judges`` adds T3-Agent's MLLM query and trajectory judges, asked
at the planner's endpoint (config file, MOBILE_AGENT_PLANNER__*) or at the one the
``--judge-*`` flags name. The state validator overrides the judges; both are recorded.

Registered through the ``mobile_agent.commands`` entry point (the core never imports eval/).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from eval.mobile_eval.run_options import TaskSelection

__all__ = ["register"]


def _names(values: list[str] | None) -> list[str] | None:
    """``--dialect a,b --dialect c`` → [a, b, c]; None when not given."""
    if not values:
        return None
    return [n.strip() for v in values for n in v.split(",") if n.strip()]


def _add_export_options(parser: argparse.ArgumentParser) -> None:
    from eval.data_engine.formats import FORMATS
    from eval.data_engine.targets import DEFAULT_DIALECTS

    group = parser.add_argument_group("training samples")
    group.add_argument("--dialect", action="append", metavar="NAME[,NAME]",
                       help=f"targets in these planner dialects or model profiles (default: {','.join(DEFAULT_DIALECTS)}; "
                            "also e.g. ui-tars-1.0, qwen3-vl, gui-owl)")
    group.add_argument("--format", action="append", metavar="FORMAT[,FORMAT]",
                       help=f"sample files: {', '.join(FORMATS)} (default: both)")


def _usage(parser: argparse.ArgumentParser) -> int:
    """``data`` without its command: the help, and the usage exit status."""
    parser.print_help()
    return 2


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("data", help="data engine: verified runs of the task families -> training data")
    commands = parser.add_subparsers(dest="data_command", metavar="COMMAND")
    parser.set_defaults(func=lambda args: _usage(parser))
    export = commands.add_parser("export", help="export the verified runs of a families run folder")
    export.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="an `eval families` / `data collect` output")
    export.add_argument("--output", "-o", type=Path, metavar="OUT", help="default: RUN_DIR/dataset")
    _add_export_options(export)
    export.set_defaults(func=export_command)
    verify = commands.add_parser("verify", help="verify the runs of a families run folder (verification.json per run)")
    verify.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="an `eval families` / `data collect` output")
    verify.add_argument("--again", action="store_true", help="verify runs verified before too")
    verify.add_argument("--device", "-s", action="append", metavar="SERIAL",
                        help="a phone whose installed apps the query judge is told (default: none, it reads the screen)")
    _add_judge_flags(verify)
    verify.set_defaults(func=verify_command, model=None, base_url=None, api_key=None)  # collect's run endpoint flags

    score = commands.add_parser("score", help="GPT4Tools' step rates of a planner on a dataset (gold history, no phone)")
    score.add_argument("dataset", type=Path, metavar="DATASET", help="an exported dataset (its runs.jsonl)")
    score.add_argument("--split", default="validation", choices=("validation", "train", "all"))
    score.add_argument("--limit", type=int, metavar="N", help="the first N runs of the split only")
    score.add_argument("--model", help="planner model (default: settings)")
    score.add_argument("--base-url", help="OpenAI-compatible endpoint")
    score.add_argument("--api-key", help="API key (prefer MOBILE_AGENT_PLANNER__API_KEY)")
    score.add_argument("--output", "-o", type=Path, metavar="FILE", help="default: DATASET/score-<split>.json")
    score.set_defaults(func=score_command)

    # collect: `eval families`' parser, then the export
    from eval.families.cli import add_families_parser
    from eval.mobile_eval.cli import mobile_eval_command

    def collect(args: argparse.Namespace, selection: TaskSelection) -> int:
        if not args.model and not args.base_url:
            args.script_reference = True  # expert data: the reference solutions
        if args.augment:
            code = _augment(args, selection)
            if code:
                return code
        judges = _judges(args)  # a judge set up wrong is said before the runs, not after
        if isinstance(judges, int):
            return judges
        code = int(mobile_eval_command(args, selection))
        if code != 0:
            return code
        _verify(args.output, judges, again=False)
        return export_command(argparse.Namespace(run_dir=args.output, output=None, dialect=args.dialect,
                                                 format=args.format))

    collecting = add_families_parser(commands, collect, name="collect",
                                     help="run family instances (reference solutions unless --model), verify and export them")
    _add_judge_flags(collecting)
    _add_export_options(collecting)
    group = collecting.add_argument_group("augmentation (each instance on each variant)")
    group.add_argument("--augment", metavar="AXIS[,AXIS]",
                       help="themes (light, dark), sizes (the phone's and each --sizes, by wm size), profiles "
                            "(every --device phone runs every instance)")
    group.add_argument("--sizes", default="720x1600", metavar="WxH[,WxH]",
                       help="screen sizes of the sizes axis besides the phone's own (default 720x1600)")


def _augment(args: argparse.Namespace, selection: TaskSelection) -> int:
    """Replace the sampled instances with their variants (and pin per-phone ones)."""
    from eval.data_engine.variants import expand, parse_sizes

    axes = [a.strip() for a in args.augment.split(",") if a.strip()]
    phones: list[tuple[str, str]] = []
    try:
        sizes = parse_sizes(args.sizes)
        if "profiles" in axes:
            phones = _phone_models(args)
        selection.tasks, selection.pinned = expand(selection.tasks, axes, sizes=sizes, phones=phones)
    except ValueError as exc:
        print(f"mobile-agent data collect: {exc}", file=sys.stderr)
        return 2
    print(f"augmented: {len(selection.tasks)} runs ({', '.join(axes)})", flush=True)
    return 0


def _phone_models(args: argparse.Namespace) -> list[tuple[str, str]]:
    """(serial, ro.product.model) of every --device phone: the profiles axis needs two or more."""
    from mobile_agent.device import open_device
    from mobile_agent.settings import load_settings

    if not args.device or len(args.device) < 2:
        raise ValueError("--augment profiles runs every instance on every phone: give two or more --device")
    settings = load_settings(args.config, {"adb.connect": args.connect})
    return [(serial, open_device(settings.adb, serial).shell(["getprop", "ro.product.model"]).strip() or serial)
            for serial in args.device]


def _add_judge_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("MLLM verifiers (T3-Agent's query and trajectory judges)")
    group.add_argument("--judges", action="store_true",
                       help="ask the query and trajectory judges too (default endpoint: the run's --model/--base-url, "
                            "else the planner settings)")
    group.add_argument("--judge-model", metavar="MODEL", help="judge model (implies --judges; default: planner.model)")
    group.add_argument("--judge-base-url", metavar="URL", help="judges' OpenAI-compatible endpoint (implies --judges)")
    group.add_argument("--judge-api-key", metavar="KEY", help="judges' API key (prefer MOBILE_AGENT_PLANNER__API_KEY)")


def _judges(args: argparse.Namespace) -> Any:
    """The judges the flags ask for (None: none asked), or the exit code of a usage error."""
    from eval.data_engine.judges import JudgeEndpoint, QueryJudge, TrajectoryJudge
    from eval.data_engine.verify import Judges
    from mobile_agent.settings import load_settings

    if not (args.judges or args.judge_model or args.judge_base_url):
        return None
    # the judges' own flags, else the run's planner flags (data collect --model/--base-url/--api-key),
    # else the settings; a key given for the run's endpoint never goes to another judge endpoint
    run_endpoint = args.judge_base_url is None
    settings = load_settings(args.config, {
        "planner.model": args.judge_model or args.model,
        "planner.base_url": args.judge_base_url or args.base_url,
        "planner.api_key": args.judge_api_key or (args.api_key if run_endpoint else None)})
    if not settings.planner.configured:
        print("mobile-agent data: --judges needs a model endpoint: --judge-base-url URL (and --judge-api-key, or "
              "MOBILE_AGENT_PLANNER__API_KEY), or the planner settings", file=sys.stderr)
        return 2
    endpoint = JudgeEndpoint(settings.planner)
    return Judges(QueryJudge(endpoint), TrajectoryJudge(endpoint), installed_apps=_installed_apps(settings, args))


def _installed_apps(settings: Any, args: argparse.Namespace) -> list[str] | None:
    """The launcher labels of the first phone named (what the query judge is told is
    installed); None when no phone answers (the judge then reads the first screen)."""
    from mobile_agent.device import open_device
    from mobile_agent.errors import MobileAgentError

    if args.data_command == "verify" and not args.device:
        return None
    try:
        device = open_device(settings.adb, (args.device or [None])[0])
        return sorted({app.label for app in device.launcher_apps() if app.label})
    except MobileAgentError:
        return None


def _verify(run_dir: Path, judges: Any, *, again: bool) -> list[Any]:
    from eval.data_engine.verify import verify_results

    def show(v: Any) -> None:
        mark = "✓" if v.passed else "×"
        differ = f"  [disagreement: {v.disagreements[0][:80]}]" if v.disagreements else ""
        print(f"{mark} verified {v.task_id:<34} {v.reason[:90]}{differ}", flush=True)

    return verify_results(run_dir, judges, again=again, on_run=show)


def verify_command(args: argparse.Namespace) -> int:
    if not (args.run_dir / "results.jsonl").is_file():
        print(f"mobile-agent data verify: no {args.run_dir / 'results.jsonl'}", file=sys.stderr)
        return 2
    judges = _judges(args)
    if isinstance(judges, int):
        return judges
    verifications = _verify(args.run_dir, judges, again=args.again)
    passed = sum(v.passed for v in verifications)
    disagree = sum(bool(v.disagreements) for v in verifications)
    tokens = sum(v.prompt_tokens + v.completion_tokens for r in verifications for v in r.verdicts)
    print(f"{passed} of {len(verifications)} run(s) passed; {disagree} with a judge disagreeing with the validator; "
          f"judges' tokens: {tokens}")
    return 0


def export_command(args: argparse.Namespace) -> int:
    from eval.data_engine.export import export_runs
    from eval.data_engine.formats import FORMATS
    from eval.data_engine.targets import DEFAULT_DIALECTS
    from eval.data_engine.variants import task_for_id
    from eval.mobile_eval.records import load_results

    results = args.run_dir / "results.jsonl"
    if not results.is_file():
        print(f"mobile-agent data export: no {results}", file=sys.stderr)
        return 2
    records = load_results(results)
    tasks = {r.task_id: t for r in records if (t := task_for_id(r.task_id)) is not None}
    out = args.output or args.run_dir / "dataset"
    dialects = _names(args.dialect) or list(DEFAULT_DIALECTS)
    formats = _names(args.format) or list(FORMATS)
    try:
        summary = export_runs(records, tasks, out, dialects=dialects, formats=formats)
    except ValueError as exc:  # an unknown dialect or format: nothing was written
        print(f"mobile-agent data export: {exc}", file=sys.stderr)
        return 2
    print(summary.card())
    print(f"dataset: {out}")
    return 0


def score_command(args: argparse.Namespace) -> int:
    from eval.data_engine.score import load_runs, score_runs
    from mobile_agent.planner import Planner
    from mobile_agent.settings import load_settings

    if not (args.dataset / "runs.jsonl").is_file():
        print(f"mobile-agent data score: no {args.dataset / 'runs.jsonl'}", file=sys.stderr)
        return 2
    settings = load_settings(getattr(args, "config", None), {
        "planner.model": args.model, "planner.base_url": args.base_url, "planner.api_key": args.api_key})
    if not settings.planner.configured:
        print("mobile-agent data score: no planner endpoint (--base-url / MOBILE_AGENT_PLANNER__BASE_URL)", file=sys.stderr)
        return 2
    runs = load_runs(args.dataset, None if args.split == "all" else args.split)[: args.limit]
    if not runs:
        print(f"mobile-agent data score: no run in the {args.split} split of {args.dataset}", file=sys.stderr)
        return 2

    def show(run_id: str, scores: list[tuple[bool, float]]) -> None:
        print(f"  {run_id:<40} " + " ".join("✓" if a and e > 0.5 else ("~" if a else "×") for a, e in scores), flush=True)

    from mobile_agent.locate import build_locator

    result = score_runs(runs, args.dataset, Planner(settings.planner), on_run=show,
                        locator=lambda: build_locator(settings))
    out = args.output or args.dataset / f"score-{args.split}.json"
    out.write_text(json.dumps({"model": settings.planner.model, "split": args.split, **result}, indent=2) + "\n",
                   encoding="utf-8")
    print("| level | runs | SR_act | SR_args | SR |\n|---|---|---|---|---|")
    rows = [*result["levels"].items(), ("all", result["overall"])]
    for level, row in rows:
        print(f"| {level} | {row['n']} | {row['sr_act']:.2f} | {row['sr_args']:.2f} | {row['sr']:.2f} |")
    print(f"scores: {out}")
    return 0
