# The two commands: `make run` and `make test`. Everything else is for them.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
# Two stamps: `make run` needs only the runtime packages; tests and the benchmark add theirs.
STAMP := $(VENV)/.installed-runtime
DEV_STAMP := $(VENV)/.installed-dev

.PHONY: install install-dev run test lint format bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(PY) requirements.txt
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $(STAMP)

$(DEV_STAMP): $(STAMP) requirements-dev.txt
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $(DEV_STAMP)

# axe-core (accessibility checks in the browser tests), pinned by package-lock.json.
node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error

install: $(STAMP)

# Headless Chromium for the browser tests (Debian's package; does nothing when present).
install-dev: $(DEV_STAMP) node_modules/.package-lock.json
	./.ci/install-browser

run: install
	$(PY) manage.py migrate --noinput
	$(PY) manage.py seed_demo --if-empty
	$(PY) manage.py collectstatic --noinput --verbosity 0
	@$(PY) manage.py billing_status --port $(PORT)
	@echo "Starting on http://127.0.0.1:$(PORT)/ ; gunicorn prints the pages to open when it is up."
	# The web server and the hourly refresh worker (Procfile), both stopped by one Ctrl-C.
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/honcho start --port $(PORT)

test: install-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) manage.py makemigrations --check --dry-run
	$(VENV)/bin/lint-imports
	$(VENV)/bin/pytest

lint: $(DEV_STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports

format: $(DEV_STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

# PostgreSQL + Redis + wrk; see bench/run.py (never part of `make test`).
bench: $(DEV_STAMP)
	$(PY) bench/run.py

clean:
	rm -rf $(VENV) node_modules staticfiles .pytest_cache .ruff_cache
