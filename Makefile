# Two commands matter (see README):  `make demo`  runs the main job on the embedded dataset,
# `make test`  sets up and passes the test suite. Both start from a fresh Debian 12 machine.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# What scripts/build_fstalign.sh builds Rev's fstalign with (make fstalign): Debian's OpenFST
# and the packaged copies of its git submodules (docs/SCORING.md#fstalign).
FSTALIGN_APT := cmake libfst-dev libicu-dev libspdlog-dev libfmt-dev libjsoncpp-dev libcli11-dev \
	libinih-dev libfccp-dev
APT_PACKAGES := python3-venv python3-dev build-essential git docker.io debootstrap sctk sox \
	libsox-fmt-all ffmpeg libsndfile1 pocketsphinx-testdata asterisk-moh-opsound-wav flite espeak-ng \
	ca-certificates chromium $(FSTALIGN_APT)
MODEL ?= pocketsphinx_en
DATASET ?= mini_en

# The demo's language: its NSW grammars are the only ones the demo builds.
DEMO_LANG = $(shell sed -n 's/^language: *//p' datasets/$(DATASET)/dataset.yaml)

.PHONY: setup apt venv venv-demo grammars grammars-demo image-demo base-image docker demo test \
	test-full lint typecheck check clean architecture fstalign ext

setup: apt venv grammars  ## system packages (when root), the virtualenv, the NSW grammars

apt:
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	  if [ -n "$$missing" ]; then echo "apt-get install$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; fi; \
	else echo "not root: skipping apt; make sure these are installed: $(APT_PACKAGES)"; fi

# `pip install -e` also compiles scoring/_dp.pyx (Cython, [build-system] requires) in place, as
# scoring/_dp.*.so: the DAE lattice's DP (docs/SCORING.md, "The compiled DP"); without a C
# compiler the install goes on and the numpy DP runs instead.
$(VENV)/.installed: pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[all,test]'
	@touch $@ && touch $(VENV)/.built-dp

# scoring/_dp.pyx or _fast.pyx changed since: compiled again in place (Cython and setuptools are in .[all])
$(VENV)/.built-dp: scoring/_dp.pyx scoring/_fast.pyx $(VENV)/.installed
	$(PY) -c "from setuptools import setup; setup()" --quiet build_ext --inplace
	@touch $@

venv: $(VENV)/.installed $(VENV)/.built-dp

ext: venv  ## the compiled DP and writer (scoring/_dp.pyx, _fast.pyx) built in place, again where a .pyx changed

# What `make demo` needs first: the core, the scorer and the Docker SDK (no torch, Ray, zoo or
# perturbation stack: those come with `make setup` / `make test`).
$(VENV)/.installed-demo: pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@if [ ! $(VENV)/.installed -nt pyproject.toml ]; then \
	  $(PY) -m pip install --quiet --upgrade pip && $(PY) -m pip install --quiet -e '.[bench]'; fi
	@touch $@

venv-demo: $(VENV)/.installed-demo

# nemo compiles a language's NSW grammars on first use (45-130 s each): here, once, so the
# first `ops/score` of an embedded language only loads them. Fast when already built.
grammars: venv
	ops/_py scripts/build_grammars.py

grammars-demo: venv-demo
	ops/_py scripts/build_grammars.py $(DEMO_LANG)

image-demo: venv-demo docker
	ops/build -m $(MODEL)

docker:  ## start a Docker Engine if none answers (root), build the base image
	@if ! docker info >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then scripts/start_dockerd.sh >/dev/null; fi
	@if docker info >/dev/null 2>&1 && ! docker image inspect asrbench/base:bookworm >/dev/null 2>&1; then \
	  scripts/build_base_image.sh; fi

base-image:
	scripts/build_base_image.sh

# Rev's fstalign, the reference scorer of the Earnings-21/22 tables, into .cache/tools/fstalign/
# (from FSTALIGN_SRC, a checkout, else cloned from its public git URL); fast when built.
fstalign: apt
	scripts/build_fstalign.sh $(FSTALIGN_SRC)

# The demo installs only what it needs, and overlaps what does not wait on each other: the
# lean virtualenv beside the base image, then the demo language's grammars beside the model
# image (docs/MEASUREMENTS.md, "first hour").
demo: apt  ## the main job: pocketsphinx on mini_en, prints the WER
	@$(MAKE) --no-print-directory -j2 venv-demo docker
	@$(MAKE) --no-print-directory -j2 grammars-demo image-demo
	ops/benchmark -m $(MODEL) -d $(DATASET)

# Two pytest-xdist workers: most tests wait on subprocesses, containers, Ray or sockets, not on
# a core. `--dist loadfile` is tests/conftest.py's scheduler: a file's tests on one worker,
# tests/ray and tests/report one group each, the Ray tests handed out first. PYTEST_ARGS=-n0
# runs serially (docs/MEASUREMENTS.md, "`make test` on two workers").
XDIST := -n 2 --dist loadfile

test: setup docker  ## the test suite CI runs (everything but the `full` marker)
	$(PY) -m pytest -m "not full" $(XDIST) $(PYTEST_ARGS)

test-full: setup docker  ## every test, including the long real-model runs
	$(PY) -m pytest $(XDIST) $(PYTEST_ARGS)

lint: venv  ## ruff's lint rules and format check, and the complexity ratchet (scripts/ratchet.py)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) scripts/ratchet.py

typecheck: venv  ## mypy over the modules every result depends on ([tool.mypy] in pyproject.toml)
	$(VENV)/bin/mypy

check: lint typecheck  ## what CI runs before the tests

clean:
	rm -rf results .pytest_cache

architecture:  ## regenerate the import graph in docs/ARCHITECTURE.md
	$(PY) scripts/import_graph.py --write

# The report site for the models and datasets we have (docs/REPORT.md): the benchmark and the
# robustness grid reuse cached hypotheses, so a rerun only rescores and rebuilds the site.
REPORT_MODELS ?= pocketsphinx_en whisper_tiny_en whisper_base
REPORT_GRID ?= gaussian_noise:1;gaussian_noise:2;gaussian_noise:4
.PHONY: report
report: setup docker  ## results for REPORT_MODELS on mini_en + a robustness grid, then report/
	ops/benchmark $(foreach m,$(REPORT_MODELS),-m $(m)) -d mini_en -j 2 --no-progress
	ops/robustness -m pocketsphinx_en -m whisper_tiny_en -d mini_en -g "$(REPORT_GRID)" \
	  --utts 10 -j 2
	ops/report -o report/
