"""The API reference (make docs): the reference checker finds broken links and anchors, and the
JavaScript page generated from index.d.ts documents every export with links that resolve."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from suite import ROOT

sys.path.insert(0, os.path.join(ROOT, "tools", "docs"))
import build  # noqa: E402
import check_links  # noqa: E402


def _write(folder, rel: str, body: str) -> None:
    path = folder / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"<!doctype html><html><body>{body}</body></html>", encoding="utf-8")


def test_the_checker_finds_each_kind_of_broken_reference(tmp_path):
    _write(
        tmp_path,
        "index.html",
        '<a href="a/page.html#here">ok</a> <a href="a/">dir</a> <a href="https://example.org/x">out</a>'
        '<a href="#top" id="top">self</a> <img src="a/missing.png"> <a href="a/page.html#gone">x</a>'
        '<a href="../outside.html">up</a> <a href="mailto:x@example.org">m</a>',
    )
    _write(
        tmp_path,
        "a/page.html",
        '<h2 id="here">h</h2><a name="named"></a><a href="../index.html#top">back</a><a href="#named">n</a>',
    )
    _write(tmp_path, "a/index.html", '<a href="page.html">p</a>')
    count, broken = check_links.check(str(tmp_path))
    assert count == 3
    assert sorted(broken) == sorted(
        [
            "index.html: a/missing.png: no such file",
            "index.html: a/page.html#gone: no anchor #gone in a/page.html",
            "index.html: ../outside.html: points outside the site",
        ]
    )


def test_the_checker_passes_a_sound_site_and_fails_on_its_command_line(tmp_path):
    _write(tmp_path, "index.html", '<a href="b.html#x">b</a>')
    _write(tmp_path, "b.html", '<p id="x">x</p>')
    tool = os.path.join(ROOT, "tools", "docs", "check_links.py")
    r = subprocess.run([sys.executable, tool, str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 0 and "2 pages, 0 broken references" in r.stdout
    _write(tmp_path, "b.html", '<p id="y">y</p>')
    r = subprocess.run([sys.executable, tool, str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 1 and "index.html: b.html#x: no anchor #x in b.html" in r.stdout
    r = subprocess.run([sys.executable, tool, str(tmp_path / "nothing")], capture_output=True, text=True)
    assert r.returncode == 2


def test_the_javascript_reference_documents_every_export_of_index_d_ts(tmp_path):
    with open(os.path.join(ROOT, "reader-js", "index.d.ts"), encoding="utf-8") as f:
        text = f.read()
    exported = re.findall(
        r"^export\s+(?:declare\s+)?(?:class|interface|type|function|const|namespace)\s+([A-Za-z_$][\w$]*)", text, re.M
    )
    decls = build.parse_declarations(text)
    assert [d.name for d in decls] == exported
    archive = next(d for d in decls if d.name == "Archive")
    assert {"tensor", "policy", "verify", "dump"} <= {m.name for m in archive.members}
    tensor = next(m for m in archive.members if m.name == "tensor")
    assert "CRC-32" in tensor.doc and "Promise<Tensor>" in tensor.signature
    build.build_js(str(tmp_path))
    build.build_index(str(tmp_path))
    page = (tmp_path / "js" / "index.html").read_text(encoding="utf-8")
    for name in exported:
        assert f'id="{name}"' in page, name
    assert '<a href="#Tensor">Tensor</a>' in page  # a type in a signature links to its declaration
    _write(tmp_path, "python/rlarchive.html", "")  # the page pdoc writes, linked from the entry page
    count, broken = check_links.check(str(tmp_path))
    assert count == 3 and broken == []


def test_every_public_module_and_package_gets_a_page():
    names = build.python_modules()
    assert {"rlarchive", "rlarchive.reader", "rlarchive.tensor_slice", "rlarchive.sb3", "rlarchive.sb3.loading"} <= set(
        names
    )
    assert {"rlarchive.extensions", "rlarchive.extensions.policy", "rlarchive.extensions.policy.evaluator"} <= set(
        names
    )
    assert not [n for n in names if n.rsplit(".", 1)[-1].startswith("_") or ".vectors" in n]
    assert len(names) == len(set(names))


@pytest.mark.slow
@pytest.mark.stage("docs")
def test_the_python_reference_builds_without_a_broken_reference(tmp_path):
    """The whole site, pdoc included (the docs extra); make docs runs the same."""
    pytest.importorskip("pdoc")
    build.main([str(tmp_path / "docs")])
    count, broken = check_links.check(str(tmp_path / "docs"))
    assert count > 40 and broken == []
