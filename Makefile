# helper-agent: the two commands a newcomer needs.
#   make demo   set up .venv with the local LLM and run the main job on the embedded defaults
#   make test   set up .venv with the dev tools, check the docs (strict build, generated reference) and run the test suite
# and for the documentation:
#   make docs            build the site into site/ (MkDocs + Material; nothing is fetched at build time)
#   make docs-reference  regenerate docs/reference/ and README.md's generated table from the code and results/

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip
# torch is pinned to the CPU build (a bare "torch" pulls a multi-GB CUDA build).
TORCH := torch==2.13.0
# The local model runs on OpenVINO GenAI (prebuilt wheels, nothing compiled). GenAI reads its GGUF file
# (re-encoded as 8-bit Q8_0 blocks) once into a folder under ~/.cache/helper-agent/models (helper_agent/llm/gguf_openvino.py),
# outside the project's venv, so a fresh clone reuses it; no torch and no second venv are needed.
# `make install-converter` adds the converter venv that makes the int8/int4 folders the earlier figures
# used (HELPER_LOCAL_WEIGHTS=int8; helper_agent/llm/convert_gguf.py says why it is a venv of its own).
# optimum-intel goes in with --no-deps: it asks for a torchvision that breaks transformers here.
CONVERTER ?= $(HOME)/.cache/helper-agent/converter
CONVERTER_REQS := helper_agent/llm/converter-requirements.txt
OPTIMUM_INTEL := optimum-intel==2.2.0
# llama.cpp (optional, `--llm local@llama.cpp`, `make install-llama`; docs/guides/local-model.md); its CPU build: tools/llama_cmake_args.py reads the CPU
# make runs on and gives -DGGML_NATIVE=OFF (portable x86-64: AVX2/FMA/F16C) plus the AVX-512 options
# the CPU reports (VBMI, VNNI, BF16), never AMX (llama.cpp's native build takes an AMX path that crashes
# on these CPUs). A CPU without AVX-512 gets -DGGML_NATIVE=OFF alone. Override with, e.g.,
#   make install-llama LLAMA_CMAKE_ARGS=-DGGML_NATIVE=OFF
LLAMA_CPUINFO ?= /proc/cpuinfo
LLAMA_CMAKE_ARGS ?= $(shell $(PYTHON) tools/llama_cmake_args.py $(LLAMA_CPUINFO))
# pip's own wheel cache ignores CMAKE_ARGS (it would reinstall whatever it built first), so the wheel is
# built once per set of flags and Python version into a folder named by their hash, and installed from it.
LLAMA_WHEELS ?= $(HOME)/.cache/helper-agent/llama-wheels/$(shell printf '%s %s' "$(LLAMA_CMAKE_ARGS)" "$$($(PYTHON) --version 2>&1)" | sha256sum | cut -c1-16)
LLAMA_CPP := llama-cpp-python==0.3.36

.PHONY: demo test install install-dev install-local install-converter install-llama bench lint clean packaged-examples docs docs-reference docs-check

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(PIP) install --quiet $(TORCH)
	$(PIP) install --quiet -e '.[dev]'
	touch $@

$(CONVERTER)/.installed: $(CONVERTER_REQS)
	$(PYTHON) -m venv $(CONVERTER)
	$(CONVERTER)/bin/python -m pip install --quiet --upgrade pip
	$(CONVERTER)/bin/python -m pip install --quiet -r $(CONVERTER_REQS)
	$(CONVERTER)/bin/python -m pip install --quiet --no-deps $(OPTIMUM_INTEL)
	touch $@

$(VENV)/.installed-local: pyproject.toml | $(BIN)/python
	$(PIP) install --quiet $(TORCH)
	$(PIP) install --quiet -e '.[dev,local]'
	$(BIN)/helper models prepare
	touch $@

$(VENV)/.installed-llama: pyproject.toml | $(VENV)/.installed-local
	@ls $(LLAMA_WHEELS)/llama_cpp_python-*.whl >/dev/null 2>&1 || { \
		echo "Building $(LLAMA_CPP) with $(LLAMA_CMAKE_ARGS) (about 7 minutes on 2 cores) into $(LLAMA_WHEELS)"; \
		CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PIP) wheel --quiet --no-deps --no-cache-dir \
			--wheel-dir $(LLAMA_WHEELS) '$(LLAMA_CPP)'; }
	$(PIP) install --quiet $(LLAMA_WHEELS)/llama_cpp_python-*.whl
	touch $@

install-dev: $(VENV)/.installed-dev
install-local: $(VENV)/.installed-local
install-converter: $(CONVERTER)/.installed
install-llama: $(VENV)/.installed-llama

demo: $(VENV)/.installed-local
	$(BIN)/helper demo --episodes 5 --out out/demo

test: $(VENV)/.installed-dev docs-check
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -q

# Material prints a notice about MkDocs 2.0 on every build; it is not a warning of this site.
MKDOCS := NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs

docs: $(VENV)/.installed-dev
	$(MKDOCS) build

docs-reference: $(VENV)/.installed-dev
	$(BIN)/python tools/docs_reference.py

# The committed reference must be what the code gives, and the site must build with no warning (a
# broken link, a missing page, a results file that is not there). Not --quiet: MkDocs 1.6 then drops
# the warnings before strict mode counts them, and a broken link passes.
docs-check: $(VENV)/.installed-dev
	$(BIN)/python tools/docs_reference.py --check
	$(MKDOCS) build --strict

bench: $(VENV)/.installed-dev
	$(BIN)/python benchmarks/world_bench.py

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check helper_agent tests benchmarks

clean:
	rm -rf $(VENV) out site .pytest_cache .hypothesis

# Rebuild the packaged train-split examples (helper_agent/prompts/examples/train_programs.jsonl):
# the first 6 TfD episodes of each task family of the seed-0 benchmark's train split.
packaged-examples: $(VENV)/.installed-dev
	rm -rf out/train-examples
	$(BIN)/helper bench generate --out out/train-examples --train 200 --valid-seen 0 --valid-unseen 0
	$(BIN)/helper bench export-examples --data out/train-examples --per-family 6 \
		--out helper_agent/prompts/examples/train_programs.jsonl
