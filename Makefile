# Everything on a fresh machine (Python 3.11, Java 17): `make run` and `make test` install what they need.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# apt-get needs root: use sudo when not root and sudo exists.
SUDO   := $(shell [ "$$(id -u)" -ne 0 ] && command -v sudo >/dev/null && echo sudo)

.PHONY: run test test-all install system-packages kafka-jars bench clean

# The three-broker config is walked for a fixed time (60 s, seed 1): too large to exhaust, and
# no verdict but its findings (exit 0) or none met (exit 3, incomplete).
run: install            ## the main job: check the Kafka model at every shipped config (spec/suite.toml), simulate three brokers
	$(BIN)/kraftcheck check --suite spec/suite.toml
	$(BIN)/kraftcheck simulate three --time 60 --seed 1 --continue --quiet --no-picture \
		--expect FencedUntilAssigned --expect CleanLeaderFromIsrOrElr --expect ElrLeftOnlyForCause || test $$? -eq 3

# `make test` leaves out the tests marked slow (TLC's agreement on every config, Spark, real
# Kafka clusters, the wheel's build); CI (CI=true) runs them too, but for those marked exhaustive
# (TLC on the largest state spaces and TLC's liveness verdicts), which only `make test-all` runs.
test: install           ## the test suite, on every core (pytest-xdist)
	$(BIN)/python -m pytest -n auto $(if $(CI),-m "not exhaustive",-m "not slow")

test-all: install       ## every test, the slow ones too, as CI runs them
	$(BIN)/python -m pytest -n auto

install: $(VENV)/.installed system-packages kafka-jars

# Kafka's released controller and server (4.0.0 and 4.4.0) for `kraftcheck conform` and
# `kraftcheck cluster`, fetched by Maven into ~/.m2 once; the harness is compiled against them
# when it first runs.
kafka-jars: $(VENV)/.installed
	$(BIN)/python -c "from kraftcheck.conform.harness import prefetch; prefetch()"

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

# Debian's graphviz (`dot`) renders traces and Debian's chromium runs the trace page's browser
# tests; each installed only when missing.
system-packages:
	@command -v dot >/dev/null 2>&1 || { \
		echo "installing Debian's graphviz"; \
		$(SUDO) apt-get update -qq && $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz >/dev/null; }
	@test -x /usr/bin/chromium || { \
		echo "installing Debian's chromium"; \
		$(SUDO) apt-get update -qq && $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

bench: install          ## benchmarks; figures go to bench/README.md
	$(BIN)/python bench/engine.py

clean:
	rm -rf $(VENV) out build *.egg-info .pytest_cache .hypothesis
