"""Extraction tools and the reader agree on what an archive holds (spec §2.7, §2.2).

Every valid vector is extracted with Python's ``zipfile``, Info-ZIP ``unzip``,
``bsdtar`` (libarchive) and 7-Zip. Each tool must create exactly the reader's
members, with the reader's bytes, as regular files its owner can read, without
set-user-ID, set-group-ID or sticky bits, and no directory but those the
member names imply.

Every invalid vector of the rules that keep it so (host system, version
needed, external attributes, file/directory clashes) is extracted too: at
least one tool must refuse it or make something else of it, which shows what
the rule prevents. ``make setup-ziptools`` installs the tools; a missing tool
makes its tests report themselves skipped.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import stat
import subprocess
import zipfile
from dataclasses import dataclass, field

import pytest
from suite import ROOT

import rlarchive
from rlarchive import checks
from rlarchive.sources import PathSource as Source

VECTORS = os.path.join(ROOT, "test-vectors")
#: the codes of the rules that make every tool extract a plain regular file
EXTRACTION_CODES = {"ZIP_VERSION_MADE_BY", "ZIP_VERSION_NEEDED", "ZIP_ATTRIBUTES", "ZIP_NAME_DIRECTORY_CLASH"}
#: a guard against a tool waiting for input or hanging; not a measure of speed
TOOL_TIMEOUT = 120


def _cases() -> list[dict]:
    with open(os.path.join(VECTORS, "index.json"), encoding="utf-8") as f:
        return json.load(f)["cases"]


VALID = [c for c in _cases() if c["expect"]["result"] == "dump"]
REFUSED = [c for c in _cases() if c["expect"]["result"] == "error" and c["expect"]["code"] in EXTRACTION_CODES]


# ---------------------------------------------------------------- the tools


def _seven_zip() -> str | None:
    return next((exe for exe in ("7z", "7zz", "7za") if shutil.which(exe)), None)


def _command(tool: str, archive: str, out: str) -> list[str] | None:
    """The command line extracting ``archive`` into ``out``, or None when the tool is not installed."""
    if tool == "unzip":
        return ["unzip", "-qq", archive, "-d", out] if shutil.which("unzip") else None
    if tool == "bsdtar":
        return ["bsdtar", "-xf", archive, "-C", out] if shutil.which("bsdtar") else None
    exe = _seven_zip()
    return [exe, "x", "-y", "-bd", "-bso0", "-bsp0", f"-o{out}", archive] if exe else None


COMMAND_TOOLS = ("unzip", "bsdtar", "7z")
TOOLS = ("zipfile",) + COMMAND_TOOLS
PACKAGES = {"unzip": "unzip", "bsdtar": "libarchive-tools", "7z": "7zip or p7zip-full"}


@dataclass
class Run:
    """What one tool did with one archive."""

    tool: str
    failure: str | None = None  # non-zero exit status or exception, with its message
    files: dict = field(default_factory=dict)  # relative path -> bytes (regular files only)
    dirs: set = field(default_factory=set)
    odd: list = field(default_factory=list)  # everything that is not a plain, owner-readable regular file or directory

    def summary(self) -> str:
        parts = [f"{self.tool}:"]
        if self.failure:
            parts.append(f"failed ({self.failure})")
        parts.append(f"files {sorted(self.files)}")
        if self.odd:
            parts.append(f"odd {self.odd}")
        return " ".join(parts)


def _extract(tool: str, archive: str, out: str) -> Run:
    """Extract ``archive`` into the empty folder ``out`` with ``tool`` (skips when it is missing)."""
    run = Run(tool)
    if tool == "zipfile":
        try:
            with zipfile.ZipFile(archive) as z:
                z.extractall(out)
        except Exception as e:  # the extraction's outcome is what is being observed
            run.failure = f"{type(e).__name__}: {e}"
    else:
        cmd = _command(tool, archive, out)
        if cmd is None:
            pytest.skip(f"{tool} is not installed (Debian package {PACKAGES[tool]}; make setup-ziptools)")
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=TOOL_TIMEOUT)
        if p.returncode != 0:
            run.failure = (
                f"exit status {p.returncode}: " + (p.stdout + p.stderr).decode("utf-8", "replace").strip()[-300:]
            )
    _survey(out, run)
    return run


def _survey(out: str, run: Run) -> None:
    """Record every entry under ``out`` without following links."""
    for dirpath, dirnames, filenames in os.walk(out):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, out).replace(os.sep, "/")
            st = os.lstat(path)
            mode = st.st_mode
            if stat.S_ISLNK(mode):
                run.odd.append(f"{rel}: symbolic link to {os.readlink(path)}")
                continue
            if mode & (stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX):
                run.odd.append(f"{rel}: mode 0o{stat.S_IMODE(mode):o} has a set-ID or sticky bit")
            if stat.S_ISDIR(mode):
                run.dirs.add(rel)
            elif not stat.S_ISREG(mode):
                run.odd.append(f"{rel}: file type 0o{stat.S_IFMT(mode):o}")
            elif not mode & stat.S_IRUSR:
                run.odd.append(f"{rel}: mode 0o{stat.S_IMODE(mode):o} without the owner-read bit")
            else:
                with open(path, "rb") as f:
                    run.files[rel] = f.read()


def _implied_dirs(names) -> set:
    return {n.rsplit("/", k)[0] for n in names for k in range(1, n.count("/") + 1)}


def _plain(case: dict, tmp_path) -> str:
    """The vector's archive as a plain file (some are stored gzipped)."""
    src = os.path.join(VECTORS, case["file"])
    if not src.endswith(".gz"):
        return src
    dst = str(tmp_path / "archive.rlarchive")
    with gzip.open(src, "rb") as f, open(dst, "wb") as g:
        shutil.copyfileobj(f, g)
    return dst


def _reader_members(path: str) -> dict:
    """The members and bytes the reader sees, after every check including the deferred ones."""
    with rlarchive.open(path, spaces="neutral") as ar:
        ar.verify()
    src = Source(path)
    try:
        state = checks.start(src)
        zip_steps = (
            checks.identify,
            checks.read_end_records,
            checks.read_central_directory,
            checks.read_local_headers,
            checks.check_layout,
        )
        for step in zip_steps:  # the ZIP directory and the layout
            state = step(state)
        return {m.name: src.read(m.data_offset, m.size) for m in state.members.values()}
    finally:
        src.close()


# ---------------------------------------------------------------- valid vectors


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("case", VALID, ids=lambda c: c["id"])
def test_tools_extract_what_the_reader_reads(case, tool, tmp_path):
    archive = _plain(case, tmp_path)
    expected = _reader_members(archive)
    out = tmp_path / "out"
    out.mkdir()
    run = _extract(tool, archive, str(out))
    assert run.failure is None, run.summary()
    assert run.odd == [], run.summary()
    assert sorted(run.files) == sorted(expected), run.summary()
    for name, data in expected.items():
        assert run.files[name] == data, f"{tool} extracted other bytes for {name}"
    assert run.dirs == _implied_dirs(expected), run.summary()


# ---------------------------------------------------------------- invalid vectors


def _listed_members(path: str) -> dict:
    """Names and bytes as the central directory gives them (no check of the rules under test)."""
    with zipfile.ZipFile(path) as z:
        return {i.filename: z.read(i) for i in z.infolist()}


def _misled(run: Run, listed: dict) -> bool:
    return bool(run.failure or run.odd or run.files != listed or run.dirs != _implied_dirs(listed))


def _clashes_only_ignoring_case(names) -> bool:
    exact = any(n + "/" == m[: len(n) + 1] for n in names for m in names)
    return not exact


def _case_sensitive(folder) -> bool:
    probe = folder / "case-probe"
    probe.write_bytes(b"")
    return not (folder / "CASE-PROBE").exists()


@pytest.mark.parametrize("case", REFUSED, ids=lambda c: c["id"])
def test_refused_vectors_mislead_some_tool(case, tmp_path):
    """Each vector of these rules makes at least one tool extract something other than the listed regular files, or refuse."""
    archive = _plain(case, tmp_path)
    with pytest.raises(rlarchive.RlarchiveError) as e:
        _reader_members(archive)
    assert e.value.code == case["expect"]["code"]
    listed = _listed_members(archive)
    runs, missing = [], []
    for tool in TOOLS:
        if tool != "zipfile" and _command(tool, archive, "-") is None:
            missing.append(tool)
            continue
        out = tmp_path / f"out-{tool}"
        out.mkdir()
        runs.append(_extract(tool, archive, str(out)))
    if any(_misled(r, listed) for r in runs):
        return
    why = []
    if (
        case["expect"]["code"] == "ZIP_NAME_DIRECTORY_CLASH"
        and _clashes_only_ignoring_case(listed)
        and _case_sensitive(tmp_path)
    ):
        why.append("the names clash only ignoring case, and this file system tells case apart")
    if missing:
        why.append(f"not installed: {', '.join(missing)}")
    if os.geteuid() != 0:
        why.append("tools keep set-ID bits and make device nodes only when run as root")
    if why:
        pytest.skip("no available tool was misled: " + "; ".join(why))
    pytest.fail("every tool extracted the listed regular files:\n" + "\n".join(r.summary() for r in runs))
