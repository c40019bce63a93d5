# Two commands on a fresh machine with only Python 3.10+:
#   make lab    build .venv if missing, open JupyterLab on notebooks/
#   make test   build .venv if missing, run every test (library, notebooks under strict nbval)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
NBVAL  := --nbval --nbval-current-env --nbval-sanitize-with notebooks/sanitize.cfg
NOTEBOOKS := $(sort $(wildcard notebooks/*.ipynb))
# Jupyter writes under HOME; keep it inside the project so runs do not depend on the machine.
JUPYTER_ENV := JUPYTER_CONFIG_DIR=$(CURDIR)/build/jupyter/config JUPYTER_DATA_DIR=$(CURDIR)/build/jupyter/data \
	IPYTHONDIR=$(CURDIR)/build/jupyter/ipython

.PHONY: lab test test-browser session data notebooks present bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[notebooks]'
	touch $(STAMP)

lab: $(STAMP)
	$(BIN)/jupyter lab notebooks/

test: $(STAMP)
	$(JUPYTER_ENV) $(BIN)/python -m pytest -m "not browser" tests $(NOTEBOOKS) $(NBVAL)

test-browser: $(STAMP)
	$(JUPYTER_ENV) $(BIN)/python -m pytest -m browser tests -v

session: $(STAMP)
	$(BIN)/python -m minilib run

data: $(STAMP)
	for script in scripts/make_*.py; do $(BIN)/python $$script || exit 1; done

notebooks: $(STAMP)
	$(JUPYTER_ENV) $(BIN)/jupyter nbconvert --execute --to notebook --inplace \
		--ExecutePreprocessor.store_widget_state=False $(NOTEBOOKS)
	$(BIN)/python scripts/clean_notebooks.py $(NOTEBOOKS)

present: $(STAMP)
	$(JUPYTER_ENV) $(BIN)/voila notebooks/06_long_session_lab.ipynb --no-browser $(if $(PORT),--port=$(PORT))

bench: $(STAMP)
	$(BIN)/python scripts/benchmark.py

clean:
	rm -rf $(VENV) build out artifacts
