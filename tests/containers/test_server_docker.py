"""The Docker images and compose file reference files, Makefile targets, commands and
settings that exist (no Docker engine here: CI builds them with the same commands)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import tomllib
import yaml

from mobile_agent.cli import build_parser
from mobile_agent.settings import Settings
from simphone.cli import build_parser as simphone_parser

REPO = Path(__file__).resolve().parents[2]
DOCKERFILES = [REPO / "docker" / "Dockerfile.cpu", REPO / "docker" / "Dockerfile.cuda"]


def _instructions(path: Path) -> list[tuple[str, str]]:
    text = re.sub(r"\\\n", " ", path.read_text())
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def _makefile_targets() -> set[str]:
    return set(re.findall(r"^([A-Za-z][\w-]*):", (REPO / "Makefile").read_text(), re.M))


def _check_command(argv: list[str]) -> None:
    """The command parses with the real CLI parser of the console script it names."""
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert argv[0] in scripts, argv
    parser = build_parser() if argv[0] == "mobile-agent" else simphone_parser()
    parser.parse_args(argv[1:])


def _check_env(name: str) -> None:
    """MOBILE_AGENT_SECTION__FIELD names a real settings field."""
    if not name.startswith("MOBILE_AGENT_"):
        return
    section, _, field = name.removeprefix("MOBILE_AGENT_").lower().partition("__")
    assert section in Settings.model_fields, name
    assert field in Settings.model_fields[section].annotation.model_fields, name


def _target_extras(target: str) -> list[str]:
    """The extras a Makefile target installs through ``$(MAKE) install EXTRAS=…``."""
    text = (REPO / "Makefile").read_text()
    recipe = re.search(rf"^{re.escape(target)}:.*\n((?:\t.*\n)*)", text, re.M)
    return re.findall(r"EXTRAS=([\w,]+)", recipe.group(1)) if recipe else []


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_dockerfile_references_what_exists(dockerfile: Path) -> None:
    steps = _instructions(dockerfile)
    # ARG BASE (default: the public image) then FROM ${BASE}: CI builds the same file on a Debian base
    assert steps[0][0] == "ARG" and steps[0][1].startswith("BASE=") and steps[1] == ("FROM", "${BASE}")
    copies = [rest.split() for word, rest in steps if word == "COPY"]
    assert copies
    for parts in copies:
        for source in parts[:-1]:
            assert (REPO / source).exists(), f"{dockerfile.name}: COPY {source} does not exist"
    runs = " ".join(rest for word, rest in steps if word == "RUN")
    targets = [t for word, rest in steps if word == "RUN" for t in re.findall(r"(?:^|&&|;)\s*make\s+([\w-]+)", rest)]
    assert targets and set(targets) <= _makefile_targets()
    assert "apt-get install" in runs and " adb " in runs  # adb inside the image
    extras = re.findall(r"-e '\.\[([\w,]+)\]'", runs) + re.findall(r"EXTRAS=([\w,]+)", runs)
    extras += [e for target in targets for e in _target_extras(target)]
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for extra in ",".join(extras).split(","):
        if extra:
            assert extra in declared
    # server.database_url=postgresql+psycopg://… works in the image: several instances, one database
    assert "postgres" in ",".join(extras).split(","), dockerfile.name
    for word, rest in steps:
        if word == "ENV":
            for name in re.findall(r"(MOBILE_AGENT_\w+)=", rest):
                _check_env(name)
    cmd = [rest for word, rest in steps if word == "CMD"]
    assert len(cmd) == 1
    argv = yaml.safe_load(cmd[0])
    _check_command(argv)
    assert "--host" in argv and argv[argv.index("--host") + 1] == "0.0.0.0"
    assert (REPO / "docker" / f"{dockerfile.name}.dockerignore").is_file()


def test_compose_file_builds_the_images_and_runs_real_commands() -> None:
    compose = yaml.safe_load((REPO / "docker" / "compose.yaml").read_text())
    services = compose["services"]
    assert {"phones", "service"} <= set(services)
    for name, spec in services.items():
        build = spec["build"]
        context = (REPO / "docker" / build["context"]).resolve()
        assert context == REPO, name
        assert (context / build["dockerfile"]).is_file(), name
        assert "BASE" in build.get("args", {}), name  # every image builds on a base given at build time
        if build["dockerfile"] == "docker/Dockerfile.postgres":  # the farm's database, Debian's package
            assert "farm" in spec.get("profiles", []) and "POSTGRES_PASSWORD" in spec["environment"], name
            assert "pg_isready" in spec["healthcheck"]["test"], name
            continue
        _check_command(spec["command"])
        for key in spec.get("environment", {}):
            _check_env(key)
        for dependency in spec.get("depends_on", {}):
            assert dependency in services
    phones = simphone_parser().parse_args(services["phones"]["command"][1:])
    addresses = yaml.safe_load(services["service"]["environment"]["MOBILE_AGENT_ADB__CONNECT"])
    assert addresses == [f"phones:{phones.port + i}" for i in range(phones.count)]
    assert phones.count >= 2  # several simulated phones
    assert "MOBILE_AGENT_SERVER__API_TOKEN" in services["service"]["environment"]
    # Each server names its instance: the hostname default changes when compose recreates a
    # container, and the runs it left would then stay "running" instead of "interrupted".
    servers = [spec for spec in services.values() if spec.get("command", [])[:2] == ["mobile-agent", "serve"]]
    names = [spec.get("environment", {}).get("MOBILE_AGENT_SERVER__INSTANCE_ID") for spec in servers]
    assert len(servers) >= 2 and all(names) and len(set(names)) == len(names), names
    for volume in services["service"]["volumes"]:
        target = volume.split(":")[1] if not volume.startswith("$") else volume.rsplit(":", 2)[1]
        assert target in {"/data", "/models"}


def test_image_commands_are_shell_free() -> None:
    """CMD in exec form: no shell between the container and the server."""
    for dockerfile in DOCKERFILES:
        cmd = [rest for word, rest in _instructions(dockerfile) if word == "CMD"][0]
        assert cmd.startswith("["), dockerfile.name
        assert shlex.split(" ".join(yaml.safe_load(cmd)))[0] == "mobile-agent"


def test_compose_farm_shares_one_database_and_one_runs_folder() -> None:
    """The farm example: every worker and the API server name the same database and mount the
    same volume at the same path (the API serves the trajectories the workers write)."""
    services = yaml.safe_load((REPO / "docker" / "compose.yaml").read_text())["services"]
    farm = {name: spec for name, spec in services.items() if "farm" in spec.get("profiles", [])}
    api = farm["farm-api"]
    workers = [spec for spec in farm.values() if spec.get("command", [])[:2] == ["mobile-agent", "worker"]]
    assert "--farm" in api["command"] and len(workers) >= 2

    def database(command: list[str]) -> str:
        return command[command.index("--database") + 1]

    assert {database(w["command"]) for w in workers} == {database(api["command"])}
    assert all("farm-runs:/data" in w["volumes"][0] for w in workers) and api["volumes"] == ["farm-runs:/data"]
    hosts = [w["command"][w["command"].index("--host-name") + 1] for w in workers]
    assert len(set(hosts)) == len(hosts)  # one name per host


def test_cuda_image_lines() -> None:
    """What the container tier cannot build here (no GPU, no NVIDIA registry), checked as text:
    the CUDA base, the torch stack's install target, the GPU settings, compose's GPU request."""
    steps = _instructions(REPO / "docker" / "Dockerfile.cuda")
    base = steps[0][1].removeprefix("BASE=")
    match = re.fullmatch(r"nvidia/cuda:(\d+)\.(\d+)\.\d+-cudnn-runtime-ubuntu(\d+)\.04", base)
    assert match, base
    # Ubuntu 22.04's python3 is 3.10: the oldest the package declares
    requires = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["requires-python"]
    assert match.group(3) == "22" and requires == ">=3.10"
    runs = " ".join(rest for word, rest in steps if word == "RUN")
    assert "python3 python3-venv python3-pip" in runs and "make install-ml" in runs
    assert "ml" in _target_extras("install-ml")[0].split(",")
    env = " ".join(rest for word, rest in steps if word == "ENV")
    assert "MOBILE_AGENT_PERCEPTION__COMPUTE_DEVICE=cuda" in env
    gpu = yaml.safe_load((REPO / "docker" / "compose.yaml").read_text())["services"]["service-gpu"]
    assert gpu["build"]["dockerfile"] == "docker/Dockerfile.cuda"
    (device,) = gpu["deploy"]["resources"]["reservations"]["devices"]
    assert device["driver"] == "nvidia" and device["capabilities"] == ["gpu"]
    assert gpu["environment"]["MOBILE_AGENT_PERCEPTION__DETECTOR"] == "grounding-dino"


def test_healthcheck_asks_the_port_the_server_listens_on() -> None:
    """CMD gives no --port: the server listens on MOBILE_AGENT_SERVER__PORT, the HEALTHCHECK asks it."""
    for dockerfile in DOCKERFILES:
        steps = _instructions(dockerfile)
        cmd = yaml.safe_load([rest for word, rest in steps if word == "CMD"][0])
        assert "--port" not in cmd, dockerfile.name
        env = " ".join(rest for word, rest in steps if word == "ENV")
        assert "MOBILE_AGENT_SERVER__PORT=8000" in env, dockerfile.name
        health = [rest for word, rest in steps if word == "HEALTHCHECK"][0]
        assert "os.environ['MOBILE_AGENT_SERVER__PORT']" in health and "/healthz" in health, dockerfile.name
