#!/usr/bin/env bash
# Builds a throwaway virtualenv holding one real serving engine (vLLM, SGLang or llama-cpp-python) from PyPI plus
# MaskForge built from this checkout, so the engine adapters can be tested against the real
# packages' structured-output interfaces. Works without a GPU: the engines import on the CPU
# (their structured-output modules and backends), they just cannot serve a model.
#
#   bash integration/engines_venv.sh vllm|sglang|llama_cpp [VENV_DIR]
#
# The engines bring their own torch (the CUDA build, several GB); that is expected. Each engine
# gets its own venv because they pin different torch/xgrammar/transformers versions. Without a
# GPU, vLLM's VllmConfig needs VLLM_TARGET_DEVICE=cpu (or DeviceConfig(device="cpu")), and
# tests should set HF_HUB_OFFLINE=1 and load tokenizers from local files.
set -euo pipefail

# The versions the adapters were checked against; override to try another release. (vLLM
# 0.34.0 does not install from PyPI: it pins flashinfer-python==0.7.3, which PyPI lacks.)
VLLM_VERSION=${VLLM_VERSION:-0.33.0}
SGLANG_VERSION=${SGLANG_VERSION:-0.5.23}
LLAMA_CPP_VERSION=${LLAMA_CPP_VERSION:-0.3.36}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
engine=${1:-}
case "$engine" in
    vllm) spec="vllm==$VLLM_VERSION" ;;
    sglang) spec="sglang==$SGLANG_VERSION" ;;
    # Built from source (llama.cpp, about 8 minutes on 2 cores); CPU only, no BLAS.
    llama_cpp) spec="llama-cpp-python==$LLAMA_CPP_VERSION jsonschema pydantic"
        export CMAKE_ARGS=${CMAKE_ARGS:-"-DGGML_BLAS=OFF -DGGML_CUDA=OFF -DGGML_VULKAN=OFF -DGGML_METAL=OFF"}
        export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} ;;
    *) echo "usage: bash integration/engines_venv.sh vllm|sglang|llama_cpp [VENV_DIR]" >&2; exit 2 ;;
esac
venv=${2:-$root/.venv-$engine}

python3 -m venv "$venv"
py="$venv/bin/python"
# The venv's bundled pip is old and its resolver slow on these dependency trees. No cache: a
# second copy of torch and the nvidia-* wheels would double the disk the install needs.
"$py" -m pip install --quiet --no-cache-dir --upgrade pip
# shellcheck disable=SC2086  # $spec may name several requirements
"$py" -m pip install --no-cache-dir $spec pytest

# MaskForge as a wheel built from the checkout (pip's isolated build fetches maturin). Not
# editable: an editable install writes the extension into python/maskforge/, where the
# developer's own editable .venv loads it from. Its own Cargo target dir inside the venv:
# sharing target/ would make cargo rebuild PyO3 for this interpreter and again for the
# developer's, and contend for the build lock. Rerun the script to pick up source changes.
CARGO_TARGET_DIR="$venv/cargo-target" "$py" -m pip install --no-cache-dir "$root"

"$py" - "$engine" <<'PY'
import importlib, sys
import maskforge
engine = importlib.import_module(sys.argv[1])
print(sys.argv[1], getattr(engine, "__version__", "?"), "| maskforge", getattr(maskforge, "__version__", "?"))
PY
