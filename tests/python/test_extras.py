"""The extras of python/pyproject.toml and the table of python/README.md that describes them agree:
every extra is listed, with exactly the packages it brings; and each example's imports are brought by
an extra its README names."""

from __future__ import annotations

import os
import re

import tomllib
from suite import ROOT


def _name(requirement: str) -> str:
    """A requirement's project name, normalised (PEP 503): ``fsspec[http]>=2023.1`` -> ``fsspec``."""
    return re.sub(r"[-_.]+", "-", re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement).group(1)).lower()


def _extras() -> dict[str, set[str]]:
    with open(os.path.join(ROOT, "python", "pyproject.toml"), "rb") as f:
        optional = tomllib.load(f)["project"]["optional-dependencies"]
    return {extra: {_name(r) for r in reqs} for extra, reqs in optional.items()}


def _readme_table() -> dict[str, set[str]]:
    with open(os.path.join(ROOT, "python", "README.md"), encoding="utf-8") as f:
        text = f.read()
    block = re.search(r"^\| Extra \| Brings \| For \|\n\| --- \| --- \| --- \|\n((?:\|.*\n)+)", text, re.M)
    assert block, "python/README.md has no extras table"
    table = {}
    for row in block.group(1).splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        extra = cells[0].strip("`")
        assert extra not in table, f"{extra} is listed twice"
        table[extra] = {_name(p) for p in cells[1].split(",")}
    return table


def test_the_readme_lists_every_extra_with_what_it_brings():
    extras, table = _extras(), _readme_table()
    assert sorted(table) == sorted(extras), "python/README.md's extras table and pyproject.toml list different extras"
    for extra, packages in extras.items():
        assert table[extra] == packages, (
            f"[{extra}]: pyproject brings {sorted(packages)}, the README says {sorted(table[extra])}"
        )


def test_the_onnx_extra_runs_the_onnx_example():
    """The README's ONNX example imports onnxruntime and says `rlarchive[onnx]`: the extra brings both."""
    assert {"onnx", "onnxruntime"} <= _extras()["onnx"]
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    section = readme[readme.index("### Export to ONNX") :]
    section = section[: section.index("\n### ", 1)]
    assert "import onnxruntime" in section and "[onnx]" in section


def test_the_sb3_extra_is_not_described_as_more_than_it_brings():
    """No line of the READMEs pairs the sb3 extra with packages it does not bring."""
    sb3 = _extras()["sb3"]
    for rel in ("README.md", "python/README.md"):
        with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
            for line in f:
                if re.search(r"rlarchive\[sb3\]|\[sb3\]'", line) and "#" in line:
                    comment = line.split("#", 1)[1].lower()
                    for other in ("fsspec", "http", "onnx", "aiohttp", "huggingface"):
                        assert other not in comment or other in sb3, f"{rel}: {line.strip()}"
