# The two commands of the README: `make run` and `make test`.
# Each creates the virtual environment in .venv and installs what it needs:
# `make run` only the server (the uvloop extra), `make test` the test tools too.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
RUN_STAMP := $(VENV)/.run-stamp
STAMP := $(VENV)/.installed-stamp
NODE_TOOLS := tools/node
NODE_STAMP := $(NODE_TOOLS)/node_modules/.installed-stamp
ESLINT := $(NODE_TOOLS)/node_modules/.bin/eslint
# The JavaScript client library (clients/js): its dev dependencies (ws, typescript).
JS_CLIENT := clients/js
JS_STAMP := $(JS_CLIENT)/node_modules/.installed-stamp

# The lowest websockets release we support: the lower bound in pyproject.toml.
WEBSOCKETS_MIN := $(shell sed -n 's/^ *"websockets>=\([0-9.]*\),.*/\1/p' pyproject.toml)
MIN_VENV := .venv-websockets-min
MIN_STAMP := $(MIN_VENV)/.installed-stamp

# The tests of the transport and connection layer, and of the Python client library (it
# supports the same websockets releases): what the lowest websockets release we support
# can change (the rest of the suite runs once, on the newest).
WEBSOCKETS_TESTS := tests/server/net/test_transport.py tests/server/net/test_http.py \
	tests/server/net/test_http_head.py tests/server/gateway/test_outgoing.py tests/server/sessions/test_hello.py \
	tests/integration/test_transport.py tests/integration/test_bad_input.py \
	tests/integration/test_sessions.py tests/server/gateway/test_limits.py \
	tests/integration/test_operations.py tests/clients/test_python.py \
	tests/clients/test_python_hello.py
# `make test`: one pytest-xdist worker per core and one more (on a quiet 2-core machine 3
# workers took 427 s where 2 took 485-550 s: many tests wait on real processes, and the
# third worker fills the cores meanwhile; 4 took 415 s); tests are handed out one at a time,
# longest first (tests/conftest.py orders them), so that no worker starts a long test when
# the others are nearly done. The slowest are listed at the end.
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
PYTEST_PARALLEL := -n $(TEST_WORKERS) --dist load --maxschedchunk 1
# `make check`'s unit tests compute: one worker per core.
UNIT_PARALLEL := -n auto --dist worksteal

# Bytecode, and pytest's rewritten test modules, are cached (in .venv) even where the
# environment turns that off (PYTHONDONTWRITEBYTECODE): otherwise every pytest worker
# compiles every module again, some 20 s of CPU per worker process.
export PYTHONDONTWRITEBYTECODE :=
export PYTHONPYCACHEPREFIX := $(CURDIR)/$(VENV)/pycache

.PHONY: run test check lint typecheck pytest unit test-websockets-min system-packages bench bench-capacity bench-bots transcripts clean

$(BIN)/python:
	$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11) and "Python 3.11+ is required")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# What running the server needs, and no more.
$(RUN_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[uvloop]'
	touch $(RUN_STAMP)

# The test tools (the dev extra includes uvloop, so it serves `make run` too), and
# the Python client library and the conformance kit, editable, for their tests.
$(STAMP): pyproject.toml clients/python/pyproject.toml conformance/pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]' -e clients/python -e conformance
	touch $(STAMP) $(RUN_STAMP)

# The npm tools: the AsyncAPI and Compose validators, ESLint and axe-core,
# pinned by package-lock.json.
$(NODE_STAMP): $(NODE_TOOLS)/package.json $(NODE_TOOLS)/package-lock.json | system-packages
	cd $(NODE_TOOLS) && npm ci --no-audit --no-fund --loglevel=error
	touch $(NODE_STAMP)

# The JavaScript client library's dev dependencies, pinned by its package-lock.json.
$(JS_STAMP): $(JS_CLIENT)/package.json $(JS_CLIENT)/package-lock.json | system-packages
	cd $(JS_CLIENT) && npm ci --no-audit --no-fund --loglevel=error
	touch $(JS_STAMP)

run: $(RUN_STAMP)
	@echo "Tali: play at http://localhost:$${TALI_PORT:-8765}/ (Ctrl-C stops the server)"
	$(BIN)/python -m server

test: lint typecheck pytest test-websockets-min

# The edit-test loop: lint, types and the unit tests (no server, socket or service).
check: lint typecheck unit

lint: $(STAMP) $(NODE_STAMP) $(JS_STAMP)
	$(ESLINT) --config $(NODE_TOOLS)/eslint.config.mjs clients/sample_js $(JS_CLIENT)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/python -m protocol.generate --check
	$(BIN)/python -m server.devtools.client_facts --check
	$(BIN)/python -m server.devtools.settings_doc --check
	$(BIN)/python -m protocol.fairness_vectors --check
	cd $(JS_CLIENT) && node scripts/check-types.mjs
	$(BIN)/hadolint Dockerfile

typecheck: $(STAMP)
	$(BIN)/mypy --strict server protocol
	$(BIN)/mypy --strict clients/python/src/tali_client conformance/src/tali_conformance

# Debian packages the tests use (node, npm, nginx, openssl, chromium-headless-shell,
# chromium, redis-server, postgresql): installed if missing.
system-packages:
	scripts/ensure-system-packages

# The attack suite (`-m abuse`) runs in a session of its own beside the rest, one worker a
# core: each of its tests holds a core (tests/abuse/conftest.py), and in the one session a
# worker handed one waited while the others held every core (a quarter of the run's CPU sat
# idle). Its report follows the rest's; the target fails if either session failed.
ABUSE_LOG := $(VENV)/abuse-tests.log

pytest: $(STAMP) system-packages $(NODE_STAMP) $(JS_STAMP)
	@TALI_TEST_STRENGTH=full $(BIN)/pytest tests/abuse -n auto -m abuse -p no:cacheprovider \
		--durations=10 > $(ABUSE_LOG) 2>&1 & attacks=$$!; \
	trap 'kill $$attacks 2>/dev/null' INT TERM; \
	echo "The attack suite runs beside the rest (its report follows)."; \
	TALI_TEST_STRENGTH=full $(BIN)/pytest $(PYTEST_PARALLEL) -m "not abuse" --durations=25; \
	rest=$$?; wait $$attacks; abuse=$$?; \
	echo "== The attack suite (pytest tests/abuse -m abuse) =="; cat $(ABUSE_LOG); \
	test $$rest -eq 0 && test $$abuse -eq 0

# At check strength (tests/strength.py): every unit test, on fewer examples; `make test`
# runs them all at full strength (whatever TALI_TEST_STRENGTH the environment has).
unit: $(STAMP) $(NODE_STAMP)
	TALI_TEST_STRENGTH=check $(BIN)/pytest $(UNIT_PARALLEL) -q -m unit

# The transport and connection tests again, and the Python client library's, on the
# lowest websockets release supported, in a second environment (the test extra only).
$(MIN_STAMP): pyproject.toml clients/python/pyproject.toml
	$(PYTHON) -m venv $(MIN_VENV)
	$(MIN_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(MIN_VENV)/bin/python -m pip install --quiet -e '.[test]' -e clients/python 'websockets==$(WEBSOCKETS_MIN)'
	touch $(MIN_STAMP)

test-websockets-min: $(MIN_STAMP) system-packages $(NODE_STAMP)
	$(MIN_VENV)/bin/python -c 'import websockets; assert websockets.__version__ == "$(WEBSOCKETS_MIN)"'
	TALI_TEST_STRENGTH=full $(MIN_VENV)/bin/pytest $(PYTEST_PARALLEL) -q $(WEBSOCKETS_TESTS)

# Record protocol/transcripts/*.json again from the real server (after a protocol change).
transcripts: $(STAMP)
	$(BIN)/python -m tests.integration.transcripts

bench: $(STAMP)
	$(BIN)/python -m benchmarks.engine

bench-capacity: $(STAMP)
	$(BIN)/python -m benchmarks.capacity

bench-bots: $(STAMP)
	$(BIN)/python -m benchmarks.bots

clean:
	rm -rf $(VENV) $(MIN_VENV) $(NODE_TOOLS)/node_modules $(JS_CLIENT)/node_modules .pytest_cache .mypy_cache .ruff_cache .hypothesis
