# rlarchive: every target sets itself up (virtual environment, pip, npm) on a fresh machine.
#   make test          the whole suite: Python, JavaScript, conformance, vectors byte for byte (a banner per stage, one summary)
#   make test-fast     the tests not marked slow, the linters and the golden vectors: a check before a commit, in minutes
#   make conformance   every registered reader over every test vector and the generated cases (reader x case matrix; SEED=S repeats a run)
#   make generate      every generated file from its source (tools/generate.py: tables, policy registry, Wasm kernel, vectors)
#   make generate-check  fail when any generated file is stale (part of make test)
#   make vectors       regenerate test-vectors/ with the reference writer (make generate's vectors alone)
#   make bench         speed, as ratios against the alternatives in the same run (BENCH_ARGS=--quick: small sizes)
#   make docs          the API reference (Python from its docstrings, JavaScript from index.d.ts) into docs/, links checked
#   make compat-python the core tests and the Python conformance run under every Python version the classifiers claim
#   make peers         SB3's and sb3-contrib's own persistence tests, with pickle and through rlarchive.sb3.use_archives()
SHELL := /bin/bash
# The processes started here write the bytecode of what they import into the project's own environment and tree,
# as Python does by default: where PYTHONDONTWRITEBYTECODE is set, each of the hundreds of processes the tests
# start would compile torch and the package from source again (about 4 CPU-s more each, measured)
unexport PYTHONDONTWRITEBYTECODE
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
CORE_STAMP := $(VENV)/.core-$(shell sha256sum python/pyproject.toml | cut -c1-12)
PY_STAMP := $(VENV)/.installed-$(shell sha256sum python/pyproject.toml | cut -c1-12)
DOCS_STAMP := $(VENV)/.docs-$(shell sha256sum python/pyproject.toml | cut -c1-12)
WARM_STAMP := $(VENV)/.bytecode-$(shell sha256sum python/pyproject.toml | cut -c1-12)
BUILD_STAMP := $(VENV)/.build-$(shell sha256sum python/pyproject.toml | cut -c1-12)
JS_STAMP := reader-js/node_modules/.installed-$(shell cat reader-js/package-lock.json 2>/dev/null | sha256sum | cut -c1-12)
# the virtual environment, made (with a current pip) unless it is there
NEW_VENV = test -x $(PY) || { $(PYTHON) -m venv $(VENV) && $(PY) -m pip install -q --upgrade pip; }
FUZZ_CASES ?= 100000
UNPICKLE_FUZZ_CASES ?= 100000

.PHONY: peers peers-fetch lint lint-fast format setup test-setup setup-core setup-build setup-python setup-js setup-browser setup-ziptools test test-fast test-python test-python-fast test-js test-js-fast test-property test-property-fast conformance conformance-golden generate generate-check tables dist vectors fuzz bench compat compat-python docs clean

# the core package alone (numpy): what the Python reader, and so conformance, needs
$(CORE_STAMP): python/pyproject.toml
	$(NEW_VENV)
	$(PY) -m pip install -q -e python
	rm -f $(VENV)/.core-*
	touch $@

# the build backend alone (setuptools), for make dist: no package is installed into the environment
$(BUILD_STAMP):
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q 'setuptools>=77'
	rm -f $(VENV)/.build-*
	touch $@

# everything the tests, the benchmarks and the API reference use, in one pip run (the core package is part of it):
# torch pinned to 2.13.0, its CPU build (an unpinned torch would bring a CUDA build of several GB); the extras
# are ranges, the suite runs on these versions. No bytecode is compiled here (--no-compile): see WARM_STAMP
$(PY_STAMP): python/pyproject.toml
	$(NEW_VENV)
	$(PY) -m pip install -q --no-compile torch==2.13.0 -e 'python[test,sb3,bench,fast,video,docs]' stable-baselines3==2.9.2 sb3-contrib==2.9.2
	rm -f $(VENV)/.installed-* $(VENV)/.core-* $(VENV)/.docs-* $(VENV)/.bytecode-*
	touch $@ $(CORE_STAMP) $(DOCS_STAMP)

# The bytecode of the modules the tests' processes import (about 2,700 of the 10,000 installed; training imports
# torch._dynamo and SymPy), written by one process that imports them: one compilation each, before the hundreds of
# processes the tests start side by side would each compile them (compiling all took 27 s on two cores, this 16 s);
# a package that is not installed is passed over (its tests skip themselves)
WARM_IMPORTS := torch torch._dynamo torch.onnx stable_baselines3 sb3_contrib rl_zoo3.train onnx onnxruntime \
  hypothesis pytest xdist rlarchive.cli rlarchive.sb3 rlarchive.zoo
$(WARM_STAMP): $(PY_STAMP)
	$(PY) -c 'import importlib, importlib.util, sys; [importlib.import_module(m) for m in sys.argv[1:] if importlib.util.find_spec(m.split(".")[0])]' $(WARM_IMPORTS)
	touch $@

$(JS_STAMP): reader-js/package.json reader-js/package-lock.json
	cd reader-js && npm ci --no-audit --no-fund --loglevel=error
	rm -f reader-js/node_modules/.installed-*
	touch $@

# pdoc, for make docs (the docs extra): installed with the rest, or here into an environment set up without it
$(DOCS_STAMP): $(PY_STAMP)
	$(PY) -c "import pdoc" 2>/dev/null || $(PY) -m pip install -q -e 'python[docs]'
	touch $@

setup-core: $(CORE_STAMP)
setup-build: $(BUILD_STAMP)
setup-python: $(PY_STAMP) $(WARM_STAMP)
setup-js: $(JS_STAMP)

# The browser test needs Debian's chromium; where it cannot be installed, that test reports itself skipped.
setup-browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "setup-browser: installing Debian's chromium for the browser test (apt-get, a minute or two)"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	      || echo "setup-browser: chromium could not be installed; the browser test will be skipped"; \
	  else echo "setup-browser: no chromium and no apt-get as root; the browser test will be skipped"; fi; }

# The extraction-tool test needs unzip, bsdtar and 7-Zip (Debian: unzip, libarchive-tools, 7zip or p7zip-full);
# where one cannot be installed, that tool's part of the test reports itself skipped. After setup-browser: both may
# run apt-get, which takes one process at a time.
setup-ziptools: | setup-browser
	@missing=""; \
	command -v unzip >/dev/null 2>&1 || missing="$$missing unzip"; \
	command -v bsdtar >/dev/null 2>&1 || missing="$$missing libarchive-tools"; \
	command -v 7z >/dev/null 2>&1 || command -v 7zz >/dev/null 2>&1 || command -v 7za >/dev/null 2>&1 || missing="$$missing 7zip"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "setup-ziptools: installing$$missing"; \
	    apt-get update -qq >/dev/null 2>&1; \
	    for p in $$missing; do \
	      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$p >/dev/null 2>&1 \
	        || { [ "$$p" = 7zip ] && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq p7zip-full >/dev/null 2>&1; } \
	        || echo "setup-ziptools: $$p could not be installed; its part of the extraction test will be skipped"; \
	    done; \
	  else echo "setup-ziptools: missing$$missing and no apt-get as root; those parts of the extraction test will be skipped"; fi; \
	fi

setup: setup-python setup-js

# The stages of make test and make test-fast, run by tools/test_stages.py: one after the other, a banner each,
# and one summary at the end (tests passed, failed and skipped per stage, and why they were skipped); a stage
# that fails does not stop the others, and the run then exits non-zero. Stages joined by + run at the same
# time: the JavaScript tests wait on browsers and timers, the Python tests on processes, so the two overlap, and
# the linters (mostly one core) fill the gaps; the stages written ~TARGET run beside them at a lower priority
# (nice), on the processor time the others leave (they read the tree and write only to temporary folders, and
# the docs into docs/, which no other stage reads).
TEST_STAGES := lint+test-python+test-js+~test-property+~conformance+~generate-check+~docs
TEST_FAST_STAGES := lint-fast test-python-fast+test-js-fast test-property-fast+conformance-golden

# Each stage is `make STAGE NO_SETUP=1 REPORTS=DIR`: NO_SETUP leaves out the set-up prerequisites (make test
# has made them first, once), REPORTS is where the test runners write JUnit XML for the summary.
# make test's set-up: its parts side by side (pip, npm, apt-get and the peers' download wait on disk and network)
test-setup: setup setup-browser setup-ziptools peers-fetch $(DOCS_STAMP)

test:
	@$(MAKE) --no-print-directory -j 3 test-setup
	$(BYTECODE)
	$(PY) tools/test_stages.py --make "$(MAKE)" $(TEST_STAGES)

test-fast: setup setup-browser
	$(BYTECODE)
	$(PY) tools/test_stages.py --make "$(MAKE)" $(TEST_FAST_STAGES)

# the bytecode of the package's and the tests' modules, written once on every core before the stages start, so
# that the processes starting side by side do not each compile them; up to date in a second
BYTECODE = $(PY) -m compileall -q -j 0 python/rlarchive tests tools >/dev/null

# pytest-xdist (the test extra) runs the Python tests in TEST_WORKERS processes (auto: one per core); the
# tests of one file run in one process, in order (--dist loadfile): a module fixture is made once
TEST_WORKERS ?= auto
XDIST = $(shell $(PY) -c "import xdist" 2>/dev/null && echo yes)
PYTEST = $(PY) -m pytest -q $(if $(XDIST),-n $(TEST_WORKERS) --dist loadfile)
# the property tests are few and long, and share nothing within a file: each test goes to the next free process
PYTEST_BY_TEST = $(PY) -m pytest -q $(if $(XDIST),-n $(TEST_WORKERS) --dist load)
junit = $(if $(REPORTS),--junitxml=$(REPORTS)/$(1).xml)

# Node first: some Python tests run the JavaScript reader
test-python: $(if $(NO_SETUP),,setup-python setup-js setup-ziptools peers-fetch)
	$(PYTEST) $(call junit,pytest) tests/python

test-python-fast: $(if $(NO_SETUP),,setup-python setup-js)
	$(PYTEST) -m "not slow" $(call junit,pytest) tests/python

# node --test runs JS_WORKERS test files at a time; a file whose header has a line `// slow: WHY` is left out
# of make test-fast
JS_WORKERS ?= 2
JS_TESTS = $(notdir $(wildcard reader-js/test/*.test.mjs))
JS_SLOW_TESTS = $(notdir $(shell grep -l '^// slow: ' reader-js/test/*.test.mjs))
node_test = cd reader-js && node --test --test-concurrency=$(JS_WORKERS) $(if $(REPORTS),--test-reporter=spec \
	--test-reporter-destination=stdout --test-reporter=junit --test-reporter-destination=$(REPORTS)/node.xml) \
	$(addprefix test/,$(1))

test-js: $(if $(NO_SETUP),,setup-js setup-browser)
	$(call node_test,$(JS_TESTS))

test-js-fast: $(if $(NO_SETUP),,setup-js)
	$(call node_test,$(filter-out $(JS_SLOW_TESTS),$(JS_TESTS)))

# property-based round trips (Python and Python -> JavaScript) and a fuzzing smoke test
test-property: $(if $(NO_SETUP),,setup)
	$(PYTEST_BY_TEST) $(call junit,pytest) tests/property

test-property-fast: $(if $(NO_SETUP),,setup)
	$(PYTEST_BY_TEST) -m "not slow" $(call junit,pytest) tests/property

# in a stage of make test, only the unexpected rows and the totals are printed (every case is in the JUnit report)
conformance: $(if $(NO_SETUP),,setup-core setup-js)
	$(PY) tests/conformance/run $(if $(SEED),--seed $(SEED)) $(if $(REPORTS),--quiet --junit $(REPORTS)/conformance.xml)

# the golden vectors alone (no generated cases): both readers, every vector
conformance-golden: $(if $(NO_SETUP),,setup-core setup-js)
	$(PY) tests/conformance/run --generated 0 $(if $(REPORTS),--quiet --junit $(REPORTS)/conformance.xml)

# the packages and the standalone conformance kit (vectors + harness), into dist/: the build backend and Node only
# (npm pack runs the reader's prepack checks with Node; nothing of the test environment is needed)
dist: setup-build
	rm -rf dist && mkdir -p dist
	cd python && ../$(PY) -c "from setuptools import build_meta as b; b.build_sdist('../dist')"
	cd python && ../$(PY) -c "from setuptools import build_meta as b; b.build_wheel('../dist')"
	rm -rf python/build python/rlarchive.egg-info  # the build's leftovers (the wheel copied test-vectors/ in)
	cd reader-js && npm pack --pack-destination ../dist --loglevel=error
	$(PY) tests/vectors/kit.py dist

# every generated file from its one source, each generator's own logic called by tools/generate.py: the shared
# tables (spec/tables.json), the portable-policy registry (spec/policy_ops.json), the Wasm kernel
# (reader-js/scripts/build-wasm.mjs) and the vectors (tests/vectors/generate.py; kept once: the package build
# copies them in, python/setup.py); generate-check compares instead of writing and names what is stale
generate: $(if $(NO_SETUP),,setup-python)
	$(PY) tools/generate.py

generate-check: $(if $(NO_SETUP),,setup-python)
	$(PY) tools/generate.py --check

# the two tables alone (no environment needed), and the vectors alone
tables:
	$(PYTHON) tools/generate.py tables policy-ops

vectors: setup-python
	$(PY) tools/generate.py vectors

# the API reference, a static site under docs/ (built, not committed: .gitignore), and its check for broken
# references (every internal link and anchor resolves; nothing is fetched)
docs: $(if $(NO_SETUP),,$(DOCS_STAMP))
	$(PY) tools/docs/build.py docs
	$(PY) tools/docs/check_links.py docs

# the formatters and linters, checking only (`make format` applies them): ruff (format and lint) over the
# Python tree, mypy (--strict on the whole package), Biome (format and lint)
# over reader-js/, and tsc --strict on reader-js/index.d.ts against a file that uses the documented API
# and on reader-js's sources (src, web, bin) with their JSDoc types (reader-js/tsconfig.json)
lint: $(if $(NO_SETUP),,setup)
	$(VENV)/bin/ruff format --check --quiet .
	$(VENV)/bin/ruff check --quiet .
	$(PY) -m mypy
	cd reader-js && npx --no-install biome ci --error-on-warnings . && npx --no-install tsc -p test/types
	cd reader-js && npx --no-install tsc -p tsconfig.json

# the formatters and the linters without the type checkers (mypy and tsc take most of make lint's time)
lint-fast: $(if $(NO_SETUP),,setup)
	$(VENV)/bin/ruff format --check --quiet .
	$(VENV)/bin/ruff check --quiet .
	cd reader-js && npx --no-install biome ci --error-on-warnings .

format: setup
	$(VENV)/bin/ruff format --quiet . && $(VENV)/bin/ruff check --quiet --fix .
	cd reader-js && npx --no-install biome check --write .

fuzz: setup
	$(PY) tests/fuzz/campaign.py --cases $(FUZZ_CASES)
	$(PY) tests/fuzz/unpickle_fuzz.py --cases $(UNPICKLE_FUZZ_CASES)

# exports load in SB3 2.0 and 2.4, and their models import here (own virtual environments under .compat/; not in make test)
compat: setup-python
	$(PY) compat/run

# the core tests and the Python reader's conformance run under each Python version the classifiers claim
# (3.10-3.13): interpreters from uv, PATH (Debian's python3.X) or pyenv, environments under .compat/;
# a version with no interpreter is skipped with a line saying so. Not in make test: it installs packages.
compat-python: setup-core
	$(PY) -m pip install -q uv || echo "compat-python: uv could not be installed; looking for python3.X and pyenv only"
	$(PY) compat/python_versions.py

# the peer tests: the source distributions of the installed stable-baselines3 and sb3-contrib (their tests ship
# in them) from the package registry into .peers/ (not committed); without network the peer runs report themselves skipped
peers-fetch: $(PY_STAMP)
	$(PY) tests/peers/fetch.py .peers

# their persistence tests with pickle and through the switch (heavy: tens of minutes; not in make test, whose
# tests/python/test_sb3_peers.py runs a fast subset when .peers/ is there)
peers: peers-fetch
	$(PY) tests/peers/run.py

# BENCH_ARGS=--quick: small sizes, three rounds (a minute or two); the default takes a few minutes on two cores
bench: setup-python
	$(PY) tests/bench/bench.py $(BENCH_ARGS)
	$(PY) tests/bench/bench_replay_buffer.py $(BENCH_ARGS)
	$(PY) tests/bench/bench_open.py $(BENCH_ARGS)
	$(PY) tests/bench/bench_sb3_load.py
	$(PY) tests/bench/bench_policy.py

clean:
	rm -rf $(VENV) reader-js/node_modules
