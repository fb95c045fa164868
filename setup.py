"""The package layout pyproject.toml cannot express: the design's top-level folders ui/ and standard_metrics/ install
inside rubriceval (rubriceval.ui, rubriceval.standard_metrics), so the wheel has one import name. Everything else is
in pyproject.toml. From a source tree, rubriceval/__init__.py finds the same two folders (tests/architecture/test_wheel.py)."""
from setuptools import find_namespace_packages, setup

MOUNTED_FOLDERS = ("ui", "standard_metrics")      # = rubriceval.MOUNTED_FOLDERS (tests/architecture/test_wheel.py checks)
SKIP = ["*.__pycache__", "*.__pycache__.*"]

packages = find_namespace_packages(include=["rubriceval", "rubriceval.*"], exclude=SKIP)
for folder in MOUNTED_FOLDERS:
    packages += [f"rubriceval.{name}" for name in find_namespace_packages(include=[folder, f"{folder}.*"], exclude=SKIP)]

setup(packages=packages, package_dir={f"rubriceval.{folder}": folder for folder in MOUNTED_FOLDERS})
