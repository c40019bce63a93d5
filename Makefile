# Two commands on a fresh machine with only Python 3.10+:
#   make lab    build .venv if missing, open JupyterLab at notebooks/00_start_here.ipynb
#   make test   build .venv if missing, run every test (library, notebooks under strict nbval)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
NBVAL  := --nbval --nbval-current-env --nbval-sanitize-with notebooks/sanitize.cfg
# the solutions too: strict nbval keeps the numbers they print true as the code changes
NOTEBOOKS := $(sort $(wildcard notebooks/*.ipynb)) notebooks/present/long_session_lab.ipynb \
	$(sort $(wildcard notebooks/solutions/*.ipynb))
# Jupyter writes under HOME; keep it inside the project so runs do not depend on the machine.
JUPYTER_ENV := JUPYTER_CONFIG_DIR=$(CURDIR)/build/jupyter/config JUPYTER_DATA_DIR=$(CURDIR)/build/jupyter/data \
	IPYTHONDIR=$(CURDIR)/build/jupyter/ipython

.PHONY: lab lint test test-browser session data notebooks present bench bench-scale bench-logs bench-sweep \
	classroom bench-classroom clean

# JupyterLab refuses to start as root (containers, cloud VMs) unless told it may.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)
# The project's own JupyterLab settings (no news pop-up over the notebooks).
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings/overrides.json

$(STAMP): pyproject.toml jupyter/overrides.json
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[notebooks,corpus]'
	mkdir -p $(dir $(LAB_SETTINGS)) && cp jupyter/overrides.json $(LAB_SETTINGS)
	touch $(STAMP)

# JupyterHub and the pure-Python proxy (pyproject's classroom extra), into the same venv:
# every student's server runs the lab's own kernel.
CLASSROOM_STAMP := $(VENV)/.classroom-stamp
$(CLASSROOM_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[classroom]'
	touch $(CLASSROOM_STAMP)

# LAB_ARGS passes more flags, e.g. make lab LAB_ARGS="--no-browser --port 8899"
# Served from the checkout's top, so the chapters' links to docs/ and minilib/ open;
# the browser starts on chapter 00.
lab: $(STAMP)
	$(JUPYTER_ENV) $(BIN)/jupyter lab --ServerApp.root_dir=$(CURDIR) \
		--LabApp.default_url=/lab/tree/notebooks/00_start_here.ipynb $(ROOT_FLAG) $(LAB_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# JupyterHub too: tests/test_deploy.py loads the classroom's hub configurations with it.
test: lint $(CLASSROOM_STAMP)
	$(JUPYTER_ENV) $(BIN)/python -m pytest -m "not browser" tests $(NOTEBOOKS) $(NBVAL)

# The classroom's browser test needs JupyterHub and its proxy: installed first.
test-browser: $(CLASSROOM_STAMP)
	$(JUPYTER_ENV) $(BIN)/python -m pytest -m browser tests -v

session: $(STAMP)
	$(BIN)/python -m minilib run

# The session first: every other data script reads it. Then the generated docs pages.
DATA_SCRIPTS := scripts/make_session.py \
	$(filter-out scripts/make_session.py,$(sort $(wildcard scripts/make_*.py)))
data: $(STAMP)
	for script in $(DATA_SCRIPTS); do $(BIN)/python $$script || exit 1; done
	$(BIN)/python -m minilib.reports six-paths --write docs/six_paths.md
	$(BIN)/python -m minilib.reports grounded --write docs/grounded.md
	$(BIN)/python -m minilib.reports usage --write docs/recorded_usage.md
	$(BIN)/python -m minilib.reports calibration --write docs/calibration.md

notebooks: $(STAMP)
	$(JUPYTER_ENV) $(BIN)/jupyter nbconvert --execute --to notebook --inplace \
		--ExecutePreprocessor.store_widget_state=False $(NOTEBOOKS)
	$(BIN)/python scripts/clean_notebooks.py $(NOTEBOOKS)
	$(BIN)/ruff format notebooks

# The project's Voila template (jupyter/voila/templates/offline): Voila's lab template
# without its CDN links, so the page loads offline and asks nothing of the internet.
present: $(STAMP)
	$(JUPYTER_ENV) JUPYTER_PATH=$(CURDIR)/jupyter $(BIN)/voila notebooks/present/long_session_lab.ipynb \
		--template=offline --no-browser $(if $(PORT),--port=$(PORT))

# A JupyterHub for a class on this machine (docs/classroom.md), e.g.
#   make classroom STUDENTS="ana ben cai" PASSWORD=class-password TEACHER=teacher PORT=8000
# STUDENTS=30 makes student01..student30; IP=0.0.0.0 lets other machines in; HUB_ARGS
# passes more flags to jupyterhub. Ctrl-C stops the hub and every server it started.
classroom: $(CLASSROOM_STAMP)
	CLASSROOM_STUDENTS="$${STUDENTS-}" CLASSROOM_PASSWORD="$${PASSWORD-}" \
	CLASSROOM_TEACHER="$${TEACHER-}" CLASSROOM_TEACHER_PASSWORD="$${TEACHER_PASSWORD-}" \
	CLASSROOM_PORT="$${PORT-}" CLASSROOM_IP="$${IP-}" CLASSROOM_DIR="$${CLASSROOM_DIR-}" \
	$(JUPYTER_ENV) $(BIN)/jupyterhub -f classroom/jupyterhub_config.py $(HUB_ARGS)

bench: $(STAMP)
	$(BIN)/python bench/benchmark.py $(BENCH_ARGS)
	$(BIN)/python bench/bench_uploads.py --markdown docs/benchmark_uploads.md

# 100-1,000 tool calls at 32k/128k/200k: full walk, FastWindow, a counter-only lower bound
# and LangChain's trim_messages (an extra of the benchmark only), side by side in one run
bench-scale: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	$(BIN)/python bench/bench_scale.py --markdown docs/benchmark_scale.md

# compress as a user runs it, on 100-8,000-call JSON logs (the largest ~47 MB): wall time
# against the parse floor, peak memory, trace size, how far each run got
bench-logs: $(STAMP)
	$(BIN)/python bench/bench_logs.py --markdown docs/benchmark_logs.md

# every production policy on the 1,000-call log, python -m minilib compare as a user runs it,
# and chapter 10 run in full; BENCH_ARGS="--against REV" measures that revision beside it
# a sweep of ten thresholds beside one replay (docs/benchmark_sweep.md)
bench-sweep: $(STAMP)
	$(BIN)/python bench/bench_sweep.py --markdown docs/benchmark_sweep.md $(BENCH_ARGS)

bench-policies: $(STAMP)
	$(BIN)/python bench/bench_policies.py --markdown docs/benchmark_policies.md $(BENCH_ARGS)

# make classroom's hub with 1, 5, 10, 20 and 30 students at once (one a real browser, the
# others through the kernel websocket API): start, memory per student, keypress -> redraw;
# BENCH_ARGS="--chapter 10 --students 30" runs chapter 10's lab instead of chapter 06's
bench-classroom: $(CLASSROOM_STAMP)
	$(JUPYTER_ENV) $(BIN)/python bench/bench_classroom.py --markdown docs/benchmark_classroom.md \
		--json build/bench/classroom.json $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build out artifacts
