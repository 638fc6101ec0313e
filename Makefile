# toolcat — the two quick-start commands are `make build` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
TOOLCAT := $(VENV)/bin/toolcat
SRC    ?= catalog_src
OUT    ?= build

.PHONY: build site test lint typecheck check bench clean browser fuzz

$(VENV)/.installed: pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PIP) install -q --upgrade pip 2>&1 | grep -v '^WARNING: Location' || true
	$(PIP) install -q -e . 2>&1 | grep -v '^WARNING: Location' || true
	@$(PY) -c "import compiler, click, yaml, jsonschema, sklearn" 
	@touch $@

$(VENV)/.dev-installed: $(VENV)/.installed pyproject.toml
	$(PIP) install -q -e '.[dev]' 2>&1 | grep -v '^WARNING: Location' || true
	@$(PY) -c "import pytest, hypothesis, playwright, skills_ref"
	@touch $@

## build: compile catalog_src into build/ and build the docs site into build/site
build: $(VENV)/.installed
	$(TOOLCAT) build $(SRC) --out $(OUT)
	$(TOOLCAT) site --build $(OUT)

## site: rebuild only the docs site from an existing build/
site: $(VENV)/.installed
	$(TOOLCAT) site --build $(OUT)

## browser: install Debian's chromium for the browser tests, where apt can
browser:
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	  (apt-get update -qq >/dev/null 2>&1; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1) ; } || true
	@command -v chromium >/dev/null 2>&1 && echo "chromium: $$(command -v chromium)" || echo "chromium not available: browser tests will be skipped"

## test: install what the tests need and run them
test: $(VENV)/.dev-installed browser
	$(PY) -m pytest -q

## fuzz: the hypothesis fuzzing harness with a large budget (FUZZ_EXAMPLES inputs per property); prints the figures
FUZZ_EXAMPLES ?= 5000
fuzz: $(VENV)/.dev-installed
	TOOLCAT_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(PY) -m pytest tests/test_fuzz.py -q -p no:cacheprovider

lint: $(VENV)/.dev-installed
	$(VENV)/bin/ruff check compiler tests bench

typecheck: $(VENV)/.dev-installed
	$(VENV)/bin/mypy

check: lint typecheck test

## bench: every benchmark, each printing a table (bench-NAME runs bench/bench_NAME.py alone)
bench: $(VENV)/.dev-installed
	@for f in bench/bench_*.py; do echo "== $$f"; $(PY) $$f || exit 1; done

bench-%: $(VENV)/.dev-installed
	$(PY) bench/bench_$*.py

clean:
	rm -rf $(OUT) .build.tmp-* .build.old-* .pytest_cache .mypy_cache .ruff_cache
