#!/usr/bin/env bash
# Build dist/askd: one self-contained executable (PyInstaller, one-file mode)
# for this machine's platform (Linux x86_64), with the web page's static files
# and the package metadata (so the binary's `askd --version` knows its version).
#
#   packaging/build_binary.sh            # one-file: dist/askd
#   packaging/build_binary.sh --onedir   # one-dir:  dist/askd-onedir/askd (for comparison)
#
# It builds from a venv of its own (WORK_DIR/venv) holding askd installed from
# this tree (not editable) with only its runtime dependencies and the `build`
# extra: the binary then holds what the wheel holds, and none of the test tools
# of the development venv (those doubled its size).
#
# Environment: PYTHON, the interpreter to build with (default: .venv/bin/python,
# else python3; it needs a shared libpython), DIST_DIR (default dist/),
# WORK_DIR (default build/pyinstaller), WHEEL (askd's wheel to install instead
# of building this tree: the packaging test passes the wheel it tests, so the
# binary holds exactly that wheel and nothing is built in the checkout). Exit 3
# when PyInstaller cannot be installed (the packaging test skips on that,
# except in CI).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-$ROOT/.venv/bin/python}
command -v "$PY" >/dev/null || PY=python3
DIST=${DIST_DIR:-$ROOT/dist}
WORK=${WORK_DIR:-$ROOT/build/pyinstaller}
MODE=onefile
case "${1:-}" in
  "") ;;
  --onedir) MODE=onedir ;;
  *) echo "usage: $0 [--onedir]" >&2; exit 2 ;;
esac

VENV=$WORK/venv
if [ ! -x "$VENV/bin/python" ]; then
  # The base interpreter, not a venv's, so the build venv sees no other packages.
  base=$("$PY" -c 'import sys; print(sys._base_executable)')
  "$base" -m venv "$VENV"
fi
BPY=$VENV/bin/python
# askd from this tree (or WHEEL), re-installed every time (its version may not
# change between edits), then its dependencies and PyInstaller (the `build` extra).
ASKD=${WHEEL:-$ROOT}
"$BPY" -m pip install --quiet --no-deps --force-reinstall "$ASKD"
"$BPY" -m pip install --quiet "$ASKD[build]" \
  || { echo "build_binary: cannot install askd[build] (PyInstaller)" >&2; exit 3; }

name=askd
[ "$MODE" = onedir ] && name=askd-onedir
# Hidden imports: the libraries every command uses, so that a lazy import
# inside one of them or inside a command module cannot slip the analysis.
hidden=()
for mod in tornado structlog pydantic pydantic_settings typer rich prometheus_client jwt platformdirs httpx websockets; do
  hidden+=(--hidden-import "$mod")
done

# askd.integrations is left out: its adapters are libraries an agent's own
# Python imports beside its framework, which the binary neither has nor runs.
mkdir -p "$WORK"
cd "$WORK"
# --strip: the interpreter's libraries carry debug symbols (libpython alone
# is 23 MB with them); without them the one-file archive unpacks at each
# start in about half the time (docs/packaging.md).
"$BPY" -m PyInstaller \
  --noconfirm --clean --log-level WARN \
  "--$MODE" --name "$name" \
  --strip \
  --distpath "$DIST" --workpath "$WORK/work-$MODE" --specpath "$WORK" \
  --collect-submodules askd \
  --exclude-module askd.integrations \
  --collect-data askd \
  --copy-metadata askd \
  "${hidden[@]}" \
  "$ROOT/packaging/entry.py"

if [ "$MODE" = onefile ]; then
  out=$DIST/askd
else
  out=$DIST/$name/$name
fi
"$out" --version
echo "build_binary: $out ($(du -sh "$out" | cut -f1))"
