"""Puts the project's data into the package: a pip-installed routerlab (Colab, a course's
JupyterLab) carries the datasets, notebooks, router configurations and P4 programs of the
commit it was built from, as ``routerlab/_bundle/<folder>``. The repository keeps them at
its top level, where a clone uses them directly (routerlab.version.project_dir)."""

import ast
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


def bundled() -> tuple:
    """The folders to bundle: ``routerlab.analysis.datasets.BUNDLED``, the one list, read from its
    source (the package cannot be imported while it is being built)."""
    source = ROOT / "lib" / "routerlab" / "analysis" / "datasets.py"
    for node in ast.parse(source.read_text()).body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if any(getattr(t, "id", None) == "BUNDLED" for t in targets):
            return tuple(ast.literal_eval(node.value))
    raise RuntimeError(f"{source} defines no BUNDLED")


#: Generated files that may lie in a working tree and never belong in the package.
LEFT_OUT = ("build", "__pycache__", ".ipynb_checkpoints", "*.pyc", "*.tmp")


class BuildWithBundle(build_py):
    def run(self):
        # an in-tree build folder may hold modules this tree no longer has
        shutil.rmtree(Path(self.build_lib) / "routerlab", ignore_errors=True)
        super().run()
        if self.editable_mode:  # an editable install reads the clone's own folders
            return
        bundle = Path(self.build_lib) / "routerlab" / "_bundle"
        for name in bundled():
            if (ROOT / name).is_dir():
                shutil.rmtree(bundle / name, ignore_errors=True)
                shutil.copytree(ROOT / name, bundle / name, ignore=shutil.ignore_patterns(*LEFT_OUT))


setup(cmdclass={"build_py": BuildWithBundle})
