# The two commands of the README's quick start are `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# torch + torchvision pinned to the builds that pip finds on these machines' disk
TORCH_PINS ?= torch==2.14.1 torchvision==0.29.1

.PHONY: demo check test typecheck venv install install-ml install-dev browser fonts postgres ffprobe lint bench clean wheel-check containers-check containers-cuda-check

# pip's own progress (Collecting … / Downloading …) is shown for the large installs: the dev
# environment downloads torch and friends, minutes the first time, and silence looked hung.
PIP_PROGRESS ?= --progress-bar on

$(BIN)/python:
	@echo "==> creating $(VENV)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

venv: $(BIN)/python

# The Docker images run these same targets (docker/Dockerfile.*), so CI's `make test`
# proves their install steps: the CPU image `make install EXTRAS=postgres`, the CUDA
# image `make install-ml`.
EXTRAS ?=
install: venv
	@echo "==> installing mobile-agent$(if $(EXTRAS), with [$(EXTRAS)]) into $(VENV)"
	$(BIN)/pip install $(if $(VERBOSE_INSTALL),$(PIP_PROGRESS),-q) -e '.$(if $(EXTRAS),[$(EXTRAS)])'

install-ml: venv
	@echo "==> installing torch $(TORCH_PINS) (a CUDA build from PyPI, GBs, even on a CPU-only machine): a large download the first time, pip shows its progress"
	$(BIN)/pip install $(PIP_PROGRESS) $(TORCH_PINS)
	$(MAKE) install EXTRAS=ml,postgres VERBOSE_INSTALL=1

install-dev: install-ml
	$(MAKE) install EXTRAS=dev,ml,postgres VERBOSE_INSTALL=1

# Debian's chromium for the dashboard's browser tests (skipped where it cannot be installed).
browser:
	@command -v chromium >/dev/null 2>&1 || \
	  { [ "$$(id -u)" = 0 ] && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1 || \
	    { DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null; }; } || \
	  echo "chromium not installed: browser tests will be skipped"

# A CJK font for the simulated phone's screens (Debian's fonts-wqy-zenhei); without it CJK text
# draws as boxes, everything else still renders (simphone/ui/fonts.py falls back to any TTF).
fonts:
	@fc-list 2>/dev/null | grep -qi -e "wqy" -e "Noto Sans CJK" -e "DroidSansFallback" || \
	  { [ "$$(id -u)" = 0 ] && DEBIAN_FRONTEND=noninteractive apt-get install -y -q fonts-wqy-zenhei >/dev/null 2>&1 || \
	    { DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q fonts-wqy-zenhei >/dev/null; }; } || \
	  echo "fonts-wqy-zenhei not installed: CJK text on the simulated phone draws as boxes"

# Debian's ffmpeg for its ffprobe: the video tests read the recorded MP4s' duration and frames with
# it (with PyAV's libavformat where it cannot be installed).
ffprobe:
	@command -v ffprobe >/dev/null 2>&1 || \
	  { [ "$$(id -u)" = 0 ] && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends ffmpeg >/dev/null 2>&1 || \
	    { DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends ffmpeg >/dev/null; }; } || \
	  echo "ffmpeg not installed: the video tests read durations with PyAV instead of ffprobe"

# Debian's PostgreSQL server binaries for the farm tests (tests/pg_fixtures.py starts a throwaway
# cluster with them; no system service is used). Skipped tests say so where it cannot be installed.
postgres:
	@command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || \
	  { [ "$$(id -u)" = 0 ] && DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >/dev/null 2>&1 || \
	    { DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >/dev/null; }; } || \
	  echo "postgresql not installed: the farm tests will be skipped"

# Sets up and runs the main job on the simulated phone.
demo: install
	$(BIN)/python scripts/quickstart.py

# make test runs the suite on this many pytest-xdist workers (0: in this process, one test at a
# time). CI has 2 cores and most tests wait on subprocesses (adb, uvicorn, PostgreSQL, chromium),
# so two workers overlap well; every worker has its own adb server, phones, PostgreSQL cluster
# and ports (tests/README.md).
PYTEST_WORKERS ?= 2

# Sets up and passes the tests.
# The fast tier, for the inner loop: tests/unit (no adb server, no service, no browser) and the
# static checks of the images (tests/containers); 1-1.5 minutes on 2 cores. tests/README.md
# says which tier a test belongs to.
check: install-dev
	@echo "==> running the fast tier (tests/unit, tests/containers)"
	$(BIN)/python -m pytest -q tests/unit tests/containers

# The wheel tier first: pytest's closing line stays the last one (.ci/run reads it).
test: install-dev browser fonts postgres ffprobe typecheck lint wheel-check
	@echo "==> running every test tier (tests/README.md)"
	$(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) --dist load

# The wheel is the product (.ci/wheel): wheel + sdist built, twine check, the wheel alone in a
# fresh venv runs --version, doctor, the quick start, serve + one REST task, mcp's tool list.
wheel-check: install-dev
	PY=$(BIN)/python .ci/wheel

# The container tier (.ci/containers; CI runs it as its own step after `make test`): the CPU
# image built with podman on a Debian base made with debootstrap (apt-get installs podman,
# runc, debootstrap, podman-compose where missing), run (/healthz, HEALTHCHECK, a REST task and
# a scripted run against simulated phones), then the compose farm (PostgreSQL, API server, two
# workers) with a worker killed. Skips, saying why, where podman cannot run.
containers-check: install-dev
	PY=$(BIN)/python .ci/containers

# docker/Dockerfile.cuda's install steps built on the same Debian base (no GPU: the torch stack
# installs and imports; about 6 minutes, a 7 GB image, removed after). CI's step after the above.
containers-cuda-check: install-dev
	PY=$(BIN)/python .ci/containers cuda

# The type checker over mobile_agent/, perception/, eval/ and server/ ([tool.mypy] in pyproject.toml).
typecheck: install-dev
	$(BIN)/python -m mypy

lint: install-dev
	$(BIN)/ruff check .

# The headline figures again, in one dated run: rewrites the first table of benchmarks/RESULTS.md
# (benchmarks/figures.py). Every bench, each with its own output: $(BIN)/python -m benchmarks
bench: install-dev
	$(BIN)/python -m benchmarks.figures

clean:
	rm -rf $(VENV) .pytest_cache build dist *.egg-info
