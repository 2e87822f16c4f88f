#!/usr/bin/env python3
"""Build the standalone conformance kit: ``kit.py OUT_DIR`` writes rlarchive-conformance-FORMAT.tar.gz (``make dist``).

The tarball holds everything a reader author in another language needs and
nothing else: the harness (``run.py`` and the three modules beside it, Python 3.10+ standard library only),
the test vectors of this format version, Annex A (the protocol) and the
specification's error catalogue. It is written deterministically (sorted
names, fixed times and owners), so the same sources give the same bytes.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def _format_version() -> str:
    """The package's FORMAT_VERSION, read from its source (no import: make dist runs this with the build tools alone)."""
    with open(os.path.join(ROOT, "python", "rlarchive", "manifest.py"), encoding="utf-8") as f:
        found = re.search(r'^FORMAT_VERSION = "([0-9]+\.[0-9]+)"$', f.read(), re.M)
    if found is None:
        raise SystemExit("python/rlarchive/manifest.py defines no FORMAT_VERSION")
    return found.group(1)


FORMAT_VERSION = _format_version()

README = """rlarchive conformance kit, format {version}

Test a reader of rlarchive {version} in any language: give the harness a
command that speaks the protocol of annex-a-conformance.md on stdin/stdout.

    python3 run.py --reader-cmd "./my-reader --conformance"
    python3 run.py --reader-cmd "./my-reader --conformance" --xfail known.json --junit conformance.xml

run.py needs only Python 3.10 or later. The vectors are in vectors/
(index.json lists every case with what a reader must answer); error codes
are in errors.md. The generated cases of Annex A.6, made afresh for each run
(--seed S repeats a run's), need the reference writer: run.py makes them when
the rlarchive package is installed (pip install rlarchive), and says so when
it is not.
"""


def files() -> dict[str, bytes]:
    """name inside the kit -> content."""
    out = {}
    with open(os.path.join(ROOT, "python", "rlarchive", "conformance", "__init__.py"), "rb") as f:
        out["run.py"] = f.read()
    for name in (
        "conformance/protocol.py",
        "conformance/reports.py",
        "filenames.py",
        "jsonbounds.py",
    ):  # the modules run.py imports
        with open(os.path.join(ROOT, "python", "rlarchive", *name.split("/")), "rb") as f:
            out[os.path.basename(name)] = f.read()
    for name in ("annex-a-conformance.md", "errors.md"):
        with open(os.path.join(ROOT, "spec", name), "rb") as f:
            out[name] = f.read()
    out["README.txt"] = README.format(version=FORMAT_VERSION).encode()
    vectors = os.path.join(ROOT, "test-vectors")
    for d, _, names in os.walk(vectors):
        for n in names:
            p = os.path.join(d, n)
            with open(p, "rb") as f:
                out["vectors/" + os.path.relpath(p, vectors).replace(os.sep, "/")] = f.read()
    return out


def build(out_dir: str) -> str:
    top = f"rlarchive-conformance-{FORMAT_VERSION}"
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in sorted(files().items()):
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size, info.mtime, info.mode = len(data), 0, 0o755 if name == "run.py" else 0o644
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"{top}.tar.gz")
    with open(path, "wb") as f:
        f.write(gzip.compress(buf.getvalue(), compresslevel=9, mtime=0))
    return path


if __name__ == "__main__":
    print(f"wrote {build(sys.argv[1] if len(sys.argv) > 1 else 'dist')}")
