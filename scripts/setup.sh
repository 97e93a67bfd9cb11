#!/usr/bin/env bash
# Set up a fresh Debian/Ubuntu machine for routerlab: system packages, then a virtual
# environment in .venv with routerlab installed (editable), its test tools, JupyterLab and
# MkDocs (the documentation site, which the tests build).
#   ./scripts/setup.sh            (as root, or with sudo available)
#   ROUTERLAB_SKIP_APT=1 ./scripts/setup.sh   to skip the system packages
# The engines' own Debian packages are their recipes' (lib/routerlab/data/engine-builds.yaml):
# as root, .venv/bin/routerlab engines install --packages-only ENGINE... installs them, so that
# users without root then build the engines or install them from a bundle.
set -euo pipefail
cd "$(dirname "$0")/.."

mapfile -t pkgs < <(grep -v -E '^\s*(#|$)' scripts/debian-packages.txt)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${ROUTERLAB_SKIP_APT:-0}" != 1 ] && [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        if ! command -v sudo >/dev/null; then
            # a user without root or sudo (a student's account): say what the administrator runs
            echo "setup: Debian packages missing: ${missing[*]}; the machine's administrator installs them," \
                 "as root: apt-get install -y --no-install-recommends ${missing[*]} (ROUTERLAB_SKIP_APT=1 skips them)" >&2
            exit 1
        fi
        sudo="sudo"
    fi
    echo "setup: installing Debian packages: ${missing[*]}"
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

py=${PYTHON:-python3}
if ! "$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "setup: routerlab needs Python >= 3.11; $py is $("$py" -V 2>&1). Set PYTHON=..." >&2
    exit 1
fi
[ -x .venv/bin/python ] || "$py" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[test,lab,docs,tutorials]'
echo "setup: done. Run the tests with: .venv/bin/python -m pytest"
