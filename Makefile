# Two commands do all the set-up on a fresh machine:  `make demo`  and  `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test install bench clean

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)  ## run the whole pipeline offline on the bundled sample corpus
	$(VENV)/bin/arbiter demo

test: $(STAMP)  ## run the test suite (CI runs exactly this)
	$(PY) -m pytest -q

clean:
	rm -rf .arbiter .pytest_cache
