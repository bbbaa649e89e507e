# The two commands: `make run` and `make test`. Everything else is for them.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
STAMP := $(VENV)/.installed

.PHONY: install run test lint format bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(PY) requirements.txt requirements-dev.txt
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $(STAMP)

install: $(STAMP)

run: install
	$(PY) manage.py migrate --noinput
	$(PY) manage.py seed_demo --if-empty
	$(PY) manage.py collectstatic --noinput --verbosity 0
	# The web server and the hourly refresh worker (Procfile), both stopped by one Ctrl-C.
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/honcho start --port $(PORT)

test: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) manage.py makemigrations --check --dry-run
	$(VENV)/bin/pytest

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: install
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

# PostgreSQL + Redis + wrk; see bench/run.py (never part of `make test`).
bench: install
	$(PY) bench/run.py

clean:
	rm -rf $(VENV) staticfiles .pytest_cache .ruff_cache
