# Two commands on a fresh machine: `make serve` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
STAMP   = $(VENV)/.installed
PYTEST_ARGS ?=
# pytest's workers (pytest-xdist). The tests mostly wait on sockets and child
# processes, so more workers than the two cores CI has pays; each worker has
# its own daemons (port 0), tmp_path and state directories. Each test file
# runs whole on one worker (pyproject's --dist loadfile), so a module's
# fixtures are made once; the slow files start first. PYTEST_WORKERS=0 runs
# serially.
PYTEST_WORKERS ?= 4

.PHONY: serve test install clean

# pip upgrades itself only when older than 23 (the oldest whose editable
# installs and resolver askd's install was checked with); the pip a fresh
# venv brings is usually newer, and its upgrade cost a fresh `make serve`
# 15 s on a loaded machine.
PIP_NEW_ENOUGH = 'import sys; from pip import __version__ as v; sys.exit(tuple(map(int, v.split(".")[:2])) < (23, 0))'

$(BIN)/python:
	@echo "Making $(VENV), askd's own Python environment (first run only)..."
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -c $(PIP_NEW_ENOUGH) || $(BIN)/pip install --quiet --upgrade pip

SERVE_STAMP = $(VENV)/.installed-serve
ARGS ?=

# Serving needs only askd itself; the test extras (Playwright, hypothesis,
# build...) are installed by the first `make test`.
# askd.cli and askd.config live in cli/ and config/, so an editable install
# needs setuptools' import hook, which announces itself with an
# "Editable installation" notice (setuptools' InformationOnly, relayed by pip
# as BuildBackendWarning). It warns of folders named like the package in the
# working directory: here ./askd is the package itself, so there is nothing
# to act on and the notice is filtered (other warnings still show).
# PIP_DISABLE_PIP_VERSION_CHECK: pip would ask PyPI whether it is the newest
# after each install, a round trip the install does not need.
EDITABLE = PYTHONWARNINGS="ignore:Editable installation" PIP_DISABLE_PIP_VERSION_CHECK=1 $(BIN)/pip install --quiet -e

$(SERVE_STAMP): $(BIN)/python pyproject.toml
	@echo "Installing askd into $(VENV) (first run only, 30 s to a minute or two)..."
	$(EDITABLE) .
	touch $(SERVE_STAMP)

$(STAMP): $(BIN)/python pyproject.toml
	@echo "Installing askd and its test tools into $(VENV) (first run only, a few minutes)..."
	$(EDITABLE) '.[test]'
	touch $(STAMP) $(SERVE_STAMP)

install: $(STAMP)

serve: $(SERVE_STAMP)  ## run the daemon (ARGS="--port 9000 --admin-port 9001"; ASKD_STATE_DIR=... for another state directory)
	$(BIN)/askd serve $(ARGS)

test: $(STAMP) typecheck test-js  ## run the whole test suite: mypy, the JS client's tests, then pytest (PYTEST_WORKERS=4 in parallel, PYTEST_ARGS for pytest)
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) $(PYTEST_ARGS)

# mypy --strict on the folders [tool.mypy] in pyproject.toml lists. askd.config
# is the config/ folder (package-dir), which mypy cannot find through the
# editable install's import hook: a link in mypy_path gives it the package's
# real name. The path is pyproject's mypy_path, whatever VENV is.
MYPY_LINKS = .venv/mypy-path

.PHONY: typecheck

typecheck: $(STAMP)  ## mypy --strict on askd/core, askd/protocol, askd/client and askd.config (a few seconds once cached)
	@mkdir -p $(MYPY_LINKS)/askd && ln -sfn $(CURDIR)/config $(MYPY_LINKS)/askd/config
	$(BIN)/mypy

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis

.PHONY: binary config-example

binary:  ## build dist/askd, the one-file executable (PyInstaller; docs/packaging.md)
	PYTHON="$(PYTHON)" packaging/build_binary.sh

config-example: $(STAMP)  ## regenerate packaging/askd.toml from the settings model
	$(BIN)/python packaging/gen_config.py

.PHONY: bench

BENCH_ARGS ?=

bench: $(STAMP)  ## run the benchmarks of docs/performance.md (BENCH_ARGS="b1 --size 1000", "--quick", "sweep --charts docs/img")
	$(EDITABLE) '.[bench]'
	$(BIN)/python -m bench $(BENCH_ARGS)

# The JavaScript client (clients/js, npm package askd-client). Its types are
# generated from askd's models and the page's copy is its build: after a
# model changes, `make js-types` regenerates both (tests/jsclient checks).
# The page's copy leaves out the modules it never loads (JS_NOT_VENDORED:
# the AI SDK adapter, which imports the `ai` package).
.PHONY: test-js test-extras js-types

JS        = clients/js
JS_VENDOR = askd/web/static/vendor/askd-client
JS_NOT_VENDORED = ai-sdk.js

test-extras: $(STAMP)  ## the framework extras from the built wheel in fresh venvs (opt-in: several minutes of pip)
	ASKD_TEST_EXTRAS=1 $(BIN)/python -m pytest -n 0 tests/packaging/test_extras.py

test-js: $(STAMP)  ## the JavaScript client's own tests, against a real askd (npm ci && npm test)
	cd $(JS) && npm ci --no-audit --no-fund && ASKD_BIN="$(abspath $(BIN))/askd" npm test

js-types: $(STAMP)  ## regenerate clients/js's schema, types and the page's built copy from the models
	$(BIN)/askd schema > $(JS)/schema/askd.schema.json
	cd $(JS) && npm ci --no-audit --no-fund && npm run types && npm run build
	rm -rf $(JS_VENDOR) && mkdir -p $(JS_VENDOR)
	for f in $(JS)/dist/*.js; do case " $(JS_NOT_VENDORED) " in *" $${f##*/} "*) ;; *) cp "$$f" $(JS_VENDOR)/ ;; esac; done
	cp $(JS)/LICENSE $(JS_VENDOR)/
