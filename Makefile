# The README's commands. `make test` and `make demo` create .venv themselves.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: venv demo test test-fast bench lint clean

$(BIN)/kofs: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(BIN)/kofs

venv: $(BIN)/kofs

demo: venv
	$(BIN)/kofs demo -o kofs-demo

# the whole suite (README command 2); the fast tier, a plain `pytest` (docs/testing.md)
test: venv
	$(BIN)/python -m pytest -q --full

test-fast: venv
	$(BIN)/python -m pytest -q

bench: venv
	$(BIN)/python -m pip install -q -e '.[bench]'
	$(BIN)/python bench/run.py

lint: venv
	$(BIN)/ruff check kofs data_fetchers bench tests
	$(BIN)/ruff format --check kofs data_fetchers bench tests
	$(BIN)/mypy

clean:
	rm -rf $(VENV) kofs-demo kofs-out .pytest_cache
