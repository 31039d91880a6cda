# helper-agent: the two commands a newcomer needs.
#   make demo   set up .venv with the local LLM and run the main job on the embedded defaults
#   make test   set up .venv with the dev tools and run the test suite

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip
# torch is pinned to the CPU build (a bare "torch" pulls a multi-GB CUDA build).
TORCH := torch==2.13.0
# llama.cpp's CPU build (README, "The local model's build"): portable x86-64 code (GGML_NATIVE=OFF:
# AVX2/FMA/F16C), which runs on any AVX2 machine. llama.cpp's native build takes an AMX path that
# crashes on these CPUs. The faster AVX-512 build this CPU reports (never AMX) is opt-in until a
# planner run shows it keeps SR (its greedy output differs on a near tie):
#   make install-local LLAMA_CMAKE_ARGS="$$(python3 tools/llama_cmake_args.py)"
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF

.PHONY: demo test install install-dev install-local bench lint clean packaged-examples

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(PIP) install --quiet $(TORCH)
	$(PIP) install --quiet -e '.[dev]'
	touch $@

$(VENV)/.installed-local: pyproject.toml | $(BIN)/python
	$(PIP) install --quiet $(TORCH)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PIP) install --quiet -e '.[dev,local]'
	touch $@

install-dev: $(VENV)/.installed-dev
install-local: $(VENV)/.installed-local

demo: $(VENV)/.installed-local
	$(BIN)/helper demo --episodes 5 --out out/demo

test: $(VENV)/.installed-dev
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -q

bench: $(VENV)/.installed-dev
	$(BIN)/python benchmarks/world_bench.py

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check helper_agent tests benchmarks

clean:
	rm -rf $(VENV) out .pytest_cache .hypothesis

# Rebuild the packaged train-split examples (helper_agent/prompts/examples/train_programs.jsonl):
# the first 6 TfD episodes of each task family of the seed-0 benchmark's train split.
packaged-examples: $(VENV)/.installed-dev
	rm -rf out/train-examples
	$(BIN)/helper bench generate --out out/train-examples --train 200 --valid-seen 0 --valid-unseen 0
	$(BIN)/helper bench export-examples --data out/train-examples --per-family 6 \
		--out helper_agent/prompts/examples/train_programs.jsonl
