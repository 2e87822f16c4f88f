"""Build step of the rlarchive package: the test vectors, kept once in the repository's test-vectors/,
are copied into the wheel and the sdist as rlarchive/vectors/ (the conformance kit runs them).

Everything else is declared in pyproject.toml. The source tree is never written: a wheel gets the
vectors in its build folder, an sdist in its release tree; a wheel built from an sdist (which has no
test-vectors/ beside it) takes the rlarchive/vectors/ the sdist carries, through the package data. An
editable install has no copy: rlarchive.conformance.vectors_dir() then finds the checkout's test-vectors/.
"""

from __future__ import annotations

import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT_VECTORS = os.path.join(HERE, "..", "test-vectors")


def copy_vectors(package_dir: str) -> None:
    """Copy the checkout's test-vectors/ to ``package_dir``/vectors, when this is a checkout."""
    if not os.path.isfile(os.path.join(CHECKOUT_VECTORS, "index.json")):
        return
    target = os.path.join(package_dir, "vectors")
    if os.path.isdir(target):
        shutil.rmtree(target)
    shutil.copytree(CHECKOUT_VECTORS, target, ignore=shutil.ignore_patterns(".*", "__pycache__"))


class BuildPyWithVectors(build_py):
    """build_py, then the vectors into the build folder (not for an editable install)."""

    def run(self) -> None:
        super().run()
        if not getattr(self, "editable_mode", False):
            copy_vectors(os.path.join(self.build_lib, "rlarchive"))


class SdistWithVectors(sdist):
    """sdist whose release tree holds rlarchive/vectors/."""

    def make_release_tree(self, base_dir: str, files: list[str]) -> None:
        super().make_release_tree(base_dir, files)
        copy_vectors(os.path.join(base_dir, "rlarchive"))


setup(cmdclass={"build_py": BuildPyWithVectors, "sdist": SdistWithVectors})
