"""The Python and JavaScript readers name their check pipeline and their ZIP reading alike (issue: read side by side).

The steps of spec §11.1 are ``rlarchive.checks.STEPS`` and ``STEPS`` of reader-js/src/checks.js; the ZIP
directory is read by the public functions of ``rlarchive.zipread`` and reader-js/src/zipread.js. The names
are the same words, snake_case in Python and camelCase in JavaScript. The extensions' registries name the same
extensions in the same order, and python/rlarchive/extensions/ and reader-js/src/extensions/ have the same folders.
"""

import os
import re

from suite import ROOT

from rlarchive import checks, zipread


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


def _js(path: str) -> str:
    with open(os.path.join(ROOT, "reader-js", "src", path), encoding="utf-8") as f:
        return f.read()


def test_the_steps_have_the_same_names_in_the_same_order():
    text = _js("checks.js")
    # STEPS is the phases' steps in order, in both readers: the phases are compared, name by name
    assert "export const STEPS = Object.freeze(Object.values(PHASES).flat());" in text
    block = re.search(r"export const PHASES = Object\.freeze\(\{(.*?)\n\}\);", text, re.S)
    assert block, "reader-js/src/checks.js exports no PHASES"
    js_phases = re.findall(r"(\w+): Object\.freeze\(\[([^\]]*)\]\)", block.group(1))
    assert [name for name, _ in js_phases] == list(checks.PHASES)
    js_steps = [step for _, steps in js_phases for step in re.findall(r"[A-Za-z]+", steps)]
    assert js_steps == [_camel(step.__name__) for step in checks.STEPS]
    assert len(js_steps) == 11  # spec §11.1 has eleven steps
    assert "export async function checkExtension(" in text and hasattr(checks, "check_extension")


def test_the_zip_directory_is_read_by_the_same_functions():
    exported = set(re.findall(r"^export (?:async )?function (\w+)\(", _js("zipread.js"), re.M))
    python = {n for n in zipread.__all__ if callable(getattr(zipread, n)) and not isinstance(getattr(zipread, n), type)}
    record_readers = {
        "find_end_record",
        "read_zip64_end_records",
        "check_end_records",
        "read_central_record",
        "check_member_names",
        "read_local_header",
        "check_member_layout",
    }
    assert record_readers <= python
    assert {_camel(n) for n in record_readers} <= exported


def test_the_registries_name_the_same_extensions_in_the_same_order():
    import json
    import subprocess

    from rlarchive import extensions

    registry = os.path.join(ROOT, "reader-js", "src", "extensions", "index.js")
    script = f"import {{ NAMES, SUPPORTED }} from {json.dumps('file://' + registry)}; console.log(JSON.stringify([NAMES, [...SUPPORTED.keys()]]))"
    out = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True, check=True)
    names, supported = json.loads(out.stdout)
    assert names == supported == list(extensions.NAMES) == list(extensions.SUPPORTED)


#: modules one language has and the other has not, by folder: the ONNX export (Python), the sums' kernels (JavaScript)
ONLY_PYTHON = {"extensions/policy": {"onnx_export", "onnx_graph", "onnx_lowering"}}
ONLY_JAVASCRIPT = {"extensions/policy": {"gemm", "gemm-wasm"}}


def _tree(root: str, suffix: str) -> dict:
    """Folder (from ``root``) -> the stems of its modules, a package's ``__init__`` named ``index`` as in JavaScript."""
    out = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        stems = {f[: -len(suffix)] for f in files if f.endswith(suffix)}
        out[os.path.relpath(folder, os.path.dirname(root)).replace(os.sep, "/")] = {
            "index" if s == "__init__" else s for s in stems
        }
    return out


def test_the_extension_folders_are_the_same_in_both_languages():
    """python/rlarchive/extensions/ and reader-js/src/extensions/ hold the same folders, each with the same modules
    (but for the ones a language alone has): the registry, then one folder per extension."""
    python = _tree(os.path.join(ROOT, "python", "rlarchive", "extensions"), ".py")
    javascript = _tree(os.path.join(ROOT, "reader-js", "src", "extensions"), ".js")
    assert (
        sorted(python)
        == sorted(javascript)
        == [
            "extensions",
            "extensions/policy",
            "extensions/replay_buffer",
            "extensions/training",
            "extensions/vec_normalize",
        ]
    )
    for folder in python:
        assert python[folder] - ONLY_PYTHON.get(folder, set()) == javascript[folder] - ONLY_JAVASCRIPT.get(
            folder, set()
        ), folder
        assert (
            ONLY_PYTHON.get(folder, set()) <= python[folder]
            and ONLY_JAVASCRIPT.get(folder, set()) <= javascript[folder]
        )
    assert "index" in python["extensions/policy"] and "evaluator" in javascript["extensions/policy"]
