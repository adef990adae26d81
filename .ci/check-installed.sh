#!/usr/bin/env bash
# Proves the tool as a user gets it, not as the editable checkout runs it:
#   builds the sdist and the wheel (the wheel from the sdist, as `python -m build` does),
#   checks both hold every auditor package of the source tree, the templates and the data files,
#   installs the wheel with the demo extra into a fresh venv outside the repository,
#   and runs `audit --version`, `audit --help` and `audit demo` from a directory that is not the checkout.
# deploy/Dockerfile installs the wheel the same way (tests/test_packaging.py checks that).
# Usage: .ci/check-installed.sh [PYTHON]   (PYTHON has `build`; default .venv/bin/python)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${1:-.venv/bin/python}
started=$SECONDS

step() { echo "check-install: $*"; }
die() { echo "check-install: FAILED: $*" >&2; exit 1; }

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
case "$TMP/" in "$ROOT"/*) die "temporary directory $TMP is inside the repository" ;; esac

version=$("$PY" -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])')

# 1. build
if ! "$PY" -m build --outdir "$TMP/dist" . >"$TMP/build.log" 2>&1; then
  cat "$TMP/build.log" >&2
  die "python -m build"
fi
wheels=("$TMP"/dist/*.whl)
sdists=("$TMP"/dist/*.tar.gz)
[ ${#wheels[@]} -eq 1 ] && [ -f "${wheels[0]}" ] || die "expected one wheel in $TMP/dist"
[ ${#sdists[@]} -eq 1 ] && [ -f "${sdists[0]}" ] || die "expected one sdist in $TMP/dist"
wheel=${wheels[0]}
sdist=${sdists[0]}
step "built $(basename "$sdist") and $(basename "$wheel")"

# 2. contents: every package of the source tree, the templates and the data files
find auditor auditor_emulator -name __init__.py -not -path '*/__pycache__/*' | sort >"$TMP/packages"
ls templates/*.j2 >"$TMP/templates"
ls auditor/data/*.json >"$TMP/data"
"$PY" - "$wheel" "$sdist" "$TMP" <<'EOF'
import sys, tarfile, zipfile
from pathlib import Path

wheel, sdist, tmp = sys.argv[1], sys.argv[2], Path(sys.argv[3])
packages = tmp.joinpath("packages").read_text().split()
templates = tmp.joinpath("templates").read_text().split()
data = tmp.joinpath("data").read_text().split()

in_wheel = set(zipfile.ZipFile(wheel).namelist())
# In the wheel, templates/ is the package auditor.templates.
wanted = packages + data + ["auditor/templates/__init__.py"] + [f"auditor/{t}" for t in templates]
missing = sorted(set(wanted) - in_wheel)
if missing:
    sys.exit(f"check-install: FAILED: the wheel lacks {missing}")

with tarfile.open(sdist) as tar:
    in_sdist = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
wanted = packages + data + templates + ["templates/__init__.py", "pyproject.toml", "setup.py", "README.md"]
missing = sorted(set(wanted) - in_sdist)
if missing:
    sys.exit(f"check-install: FAILED: the sdist lacks {missing}")
print(f"check-install: wheel and sdist hold all {len(packages)} packages, "
      f"{len(templates)} templates and {len(data)} data file(s)")
EOF

# 3. install the wheel, as deploy/Dockerfile does, into a venv outside the repository
"$PY" -m venv "$TMP/venv"
if ! "$TMP/venv/bin/python" -m pip install --quiet --disable-pip-version-check "${wheel}[demo]" >"$TMP/pip.log" 2>&1; then
  cat "$TMP/pip.log" >&2
  die "pip install ${wheel}[demo]"
fi
step "installed $(basename "$wheel")[demo] into a fresh venv ($TMP/venv)"

# 4. run it from a directory that is not the checkout, with nothing pointing back at it
mkdir "$TMP/run"
cd "$TMP/run"
unset PYTHONPATH
export XDG_DATA_HOME="$TMP/data-home"
audit="$TMP/venv/bin/audit"

where=$("$TMP/venv/bin/python" -c 'import auditor; print(auditor.__file__)')
case "$where" in "$TMP/venv/"*) ;; *) die "auditor imported from $where, not from the venv" ;; esac
"$TMP/venv/bin/python" -c '
import importlib, pkgutil, auditor
names = [m.name for m in pkgutil.walk_packages(auditor.__path__, "auditor.")]
for name in names:
    importlib.import_module(name)
print(f"check-install: all {len(names)} installed modules import")'

out=$("$audit" --version) || die "audit --version exited $?"
[ "$out" = "sagemaker-auditor $version" ] || die "audit --version printed '$out', expected 'sagemaker-auditor $version'"
step "audit --version: $out"

"$audit" --help >"$TMP/help.txt" || die "audit --help exited $?"
grep -q "demo" "$TMP/help.txt" || die "audit --help does not list the commands"
step "audit --help: ok"

if ! "$audit" demo --output-dir "$TMP/run/out" >"$TMP/demo.log" 2>&1; then
  cat "$TMP/demo.log" >&2
  die "audit demo"
fi
for file in report.html report.json report.eml; do
  [ -s "out/$file" ] || die "audit demo wrote no out/$file"
done
"$TMP/venv/bin/python" -c 'import json, sys; json.load(open(sys.argv[1]))' out/report.json \
  || die "out/report.json is not JSON"
step "audit demo: wrote report.html, report.json (parses), report.eml"

# The demo's history, read through the config it wrote, as a user does after `make demo`.
"$audit" history --applied --config out/auditor.toml >"$TMP/applied.txt" 2>&1 || {
  cat "$TMP/applied.txt" >&2; die "audit history --applied --config out/auditor.toml"; }
grep -q " applied " "$TMP/applied.txt" || die "the demo's history records no applied change"
"$audit" plans --config out/auditor.toml >"$TMP/plans.txt" 2>&1 || {
  cat "$TMP/plans.txt" >&2; die "audit plans --config out/auditor.toml"; }
step "audit demo: its history lists the applied change and the plans (audit plans --config out/auditor.toml)"

step "ok in $((SECONDS - started)) s"
