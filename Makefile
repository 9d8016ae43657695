# MaskForge developer commands. `make test` is the one command that runs every test.
#
# PYTHON is the interpreter whose environment receives the extension (a virtualenv is
# recommended: `python -m venv .venv && . .venv/bin/activate`).

PYTHON ?= python3
CARGO ?= cargo
.DEFAULT_GOAL := test
.PHONY: test test-rust test-python install bench bench-build fmt fmt-check lint example clean

test: test-rust test-python

# maskforge-py is a PyO3 extension module (built with `extension-module`, so it takes the
# interpreter's symbols from the process that loads it): it has no Rust tests and is tested
# through pytest against the installed package; excluding it saves a test build of PyO3.
# Test builds are optimised (Cargo.toml's [profile.test]).
test-rust:
	$(CARGO) test --workspace --exclude maskforge-py --all-features

# Builds the release extension into the current Python environment with what every test
# needs: the test extra (pytest, hypothesis, jsonschema, numpy, tokenizers), the generation
# stack (pydantic, transformers, torch; torch comes through tools/install-torch.sh, one wheel
# at a time) and tqdm. `-rs` lists each skipped test with its reason (an opt-in model or
# tokenizer file that is absent) in the summary.
install:
	PYTHON=$(PYTHON) bash tools/install-torch.sh
	$(PYTHON) -m pip install ".[test,transformers,pydantic,progress]"

test-python: install
	$(PYTHON) -m pytest -rs tests/

bench:
	$(CARGO) bench -p maskforge-core --features tokenizer-processing --bench masks

bench-build:
	$(CARGO) bench -p maskforge-core --all-features --no-run

example:
	$(CARGO) run -p maskforge-core --example basic_json_schema

fmt:
	$(CARGO) fmt --all

fmt-check:
	$(CARGO) fmt --all -- --check

lint:
	$(CARGO) clippy -p maskforge-core --all-targets --all-features -- -D warnings

clean:
	$(CARGO) clean
	rm -rf dist build .pytest_cache
