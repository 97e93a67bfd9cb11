# The two commands of the README. Each does the set-up it needs first.
#   make figures   the main job: every notebook in replay mode (no root, no engines)
#   make test      every test, with Click, FastClick, bmv2 (and its logging build), p4c and VPP built from their pins
#                  (or taken from the bundles in $ROUTERLAB_ENGINE_BUNDLES)
# and for a maintainer:
#   make image     the course image (Containerfile), with Podman: routerlab, the courses'
#                  engines from a bundle of the installed ones, JupyterLab, a non-root user
#   make release   the sdist and wheel of the tagged release, built, checked and replayed
#                  from a fresh environment into dist/ (scripts/release.py; before the
#                  release's commit, `.venv/bin/python scripts/release.py prepare`)
.PHONY: figures test setup engines image release

VENV := .venv
STAMP := $(VENV)/.routerlab-setup

figures: $(STAMP)
	$(VENV)/bin/routerlab figures --out figures

# routerlab engines install returns in seconds when the engines are built; a missing
# engine then fails its test instead of skipping it
test: engines
	ROUTERLAB_REQUIRE_ENGINES=1 $(VENV)/bin/python -m pytest

engines: $(STAMP)
	$(VENV)/bin/routerlab engines install

setup: $(STAMP)

image: $(STAMP)
	$(VENV)/bin/routerlab engines install click bmv2-log p4c
	$(VENV)/bin/routerlab course image

release: $(STAMP)
	$(VENV)/bin/python scripts/release.py

$(STAMP): scripts/setup.sh scripts/debian-packages.txt pyproject.toml
	./scripts/setup.sh
	touch $@
