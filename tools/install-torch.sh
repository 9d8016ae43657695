#!/usr/bin/env bash
# Installs torch into the active Python environment, unless it is already importable.
#
# PyPI's Linux torch wheel is the CUDA build: with its nvidia-* dependencies about 3 GB to
# download and 5 GB unpacked. pip downloads every wheel of an install before unpacking any and
# keeps a second copy in its cache, which alone fails on a small disk; so the wheels come one
# at a time, without the cache: the disk holds the installed files and one wheel.
set -euo pipefail

python=${PYTHON:-python3}
if "$python" -c 'import torch' 2>/dev/null; then
    "$python" -c 'import torch; print("torch", torch.__version__, "(already installed)")'
    exit 0
fi
report=$(mktemp)
trap 'rm -f "$report" "$report.urls"' EXIT
"$python" -m pip install --no-cache-dir --dry-run --quiet --report "$report" torch
"$python" - "$report" >"$report.urls" <<'PY'
import json, sys

for item in json.load(open(sys.argv[1]))["install"]:
    print(item["download_info"]["url"])
PY
while read -r url; do
    "$python" -m pip install --quiet --no-cache-dir --no-deps "$url"
done <"$report.urls"
"$python" -c 'import torch; print("torch", torch.__version__)'
