"""The rlarchive conformance harness (spec Annex A), shipped with the package.

Runs readers (commands speaking the JSON-lines protocol of Annex A) over every
test vector and prints a reader x case matrix; the exit status is 0 only when
every result is expected. A reader gets each case as a copy of its archive
under a random name, alone in a fresh folder (Annex A.4); it runs in a process
group of its own, which the harness ends as a whole, and an answer line may be
at most 64 MiB long (Annex A.1). The vectors of this package's format version come
inside the package, so a reader author needs nothing else:

    rlarchive conformance --reader-cmd "./my-reader"               # from any folder
    rlarchive conformance --reader-cmd "node my-reader.js" --xfail known.json --junit results.xml

This repository's own readers run through ``tests/conformance/run`` (the
registered readers of ``tests/conformance/readers.json``).
"""

from __future__ import annotations

import argparse
import base64
import gzip
import json
import os
import re
import secrets
import shlex
import shutil
import struct
import sys
import tempfile
import time
from typing import TYPE_CHECKING, Any

# The harness is also the standalone kit's run.py (make dist), run as a file beside its modules (conformance_protocol, conformance_reports, jsonbounds).
if TYPE_CHECKING or __package__:
    from ..jsonbounds import loads as bounded_loads
    from .protocol import (
        GRACE_SECONDS,
        MAX_ANSWER_DEPTH,
        MAX_ANSWER_MEMORY,
        MAX_LINE_BYTES,
        Testee,
        TesteeDied,
        bounded_lines,
        end_process_group,
    )
    from .reports import (
        REQUEST_KINDS,
        SYMBOL,
        UNEXPECTED,
        junit_xml,
        print_matrix,
        print_summary,
        write_junit,
    )
else:  # run.py of the standalone kit
    from jsonbounds import loads as bounded_loads
    from protocol import (
        GRACE_SECONDS,
        MAX_ANSWER_DEPTH,
        MAX_ANSWER_MEMORY,
        MAX_LINE_BYTES,
        Testee,
        TesteeDied,
        bounded_lines,
        end_process_group,
    )
    from reports import (
        REQUEST_KINDS,
        SYMBOL,
        UNEXPECTED,
        junit_xml,
        print_matrix,
        print_summary,
        write_junit,
    )

#: Random archives and random policies generated per run by default (Annex A.6): N of each.
GENERATED_COUNT = 4

__all__ = [
    "GRACE_SECONDS",
    "MAX_LINE_BYTES",
    "SYMBOL",
    "UNEXPECTED",
    "Testee",
    "TesteeDied",
    "ask",
    "bounded_lines",
    "end_process_group",
    "handshake_name",
    "judge",
    "judge_report",
    "junit_xml",
    "load_cases",
    "main",
    "print_matrix",
    "print_summary",
    "run_reader",
    "same_actions",
    "stage",
    "vectors_dir",
    "write_junit",
]


def read_json(path: str) -> Any:
    """A JSON file the harness is given (the vectors' index and predict files, readers.json, an xfail list), read
    within the bounds of an answer line (Annex A.1); a clear exit for one that is not, never a traceback."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > MAX_LINE_BYTES:
                raise ValueError(f"{size} bytes, more than {MAX_LINE_BYTES}")
            raw = f.read(size + 1)
        return bounded_loads(raw, max_depth=MAX_ANSWER_DEPTH, max_memory=MAX_ANSWER_MEMORY)
    except (OSError, ValueError) as e:  # ValueError: too large, not UTF-8, not JSON, beyond a bound
        raise SystemExit(f"rlarchive conformance: {path}: not a JSON file the harness can read ({e})") from None


#: A case's files (schemas/test-vectors-index-1.schema.json): inside the folder of index.json.
_CASE_FILES = {
    "file": re.compile(r"(valid|invalid)/[a-z0-9-]+\.rlarchive(\.gz)?"),
    "request_file": re.compile(r"requests/[a-z0-9-]+\.request(\.gz)?"),
}
#: What each expected result names beside it.
_EXPECT = {"dump": "dump_file", "actions": "predict_file", "error": "code"}


def _case_issue(case: dict[str, Any]) -> str | None:
    """What the harness cannot run in one case of the index: its files, then its expected result."""
    for key, pattern in _CASE_FILES.items():
        value = case.get(key)
        if (key in case or key == "file") and not (isinstance(value, str) and pattern.fullmatch(value)):
            return f"{key} must match {pattern.pattern}"
    expect = case.get("expect")
    result = expect.get("result") if isinstance(expect, dict) else None
    named = _EXPECT.get(result) if isinstance(result, str) else None
    if named is None or not isinstance(case["expect"].get(named), str):
        return "expect must be a result (dump, actions or error) with its file or code"
    return None


def _index_issue(index: Any) -> str | None:
    """What the harness cannot run in an index: its format and version, then each case's id, files and
    expected result (schemas/test-vectors-index-1.schema.json says more; the vectors' tests hold the index
    against it)."""
    if not isinstance(index, dict) or (index.get("format"), index.get("version")) != ("rlarchive-test-vectors", 1):
        return "not an index of rlarchive test vectors, version 1"
    cases = index.get("cases")
    if not (isinstance(cases, list) and cases):
        return "cases must be a list of one or more cases"
    for i, case in enumerate(cases):
        if not (isinstance(case, dict) and isinstance(case.get("id"), str)):
            return f"case {i} must be an object with an id"
        issue = _case_issue(case)
        if issue is not None:
            return f"case {case['id'][:80]!r}: {issue}"
    return None


def load_cases(vectors: str) -> list[Any]:
    """The cases of ``vectors/index.json``; an index the harness cannot run is a clear exit."""
    path = os.path.join(vectors, "index.json")
    index = read_json(path)
    issue = _index_issue(index)
    if issue is not None:
        raise SystemExit(f"rlarchive conformance: {path}: {issue}")
    cases: list[Any] = index["cases"]
    return cases


def case_path(vectors: str, case: dict[str, Any], rel: str) -> str:
    """A file of a case: ``rel`` is relative to the folder of ``index.json``, or to the case's own ``root``
    (a generated case's folder, Annex A.6)."""
    return os.path.join(os.path.abspath(case.get("root") or vectors), rel)


def _read_stored(path: str) -> bytes:
    """A file's bytes (a gzip-stored one expanded)."""
    with gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb") as f:
        data: bytes = f.read()
    return data


def stage(vectors: str, case: dict[str, Any], tmp: str) -> tuple[str, str]:
    """(folder, path): a copy of a case's archive, as a testee gets it (Annex A.4): the archive's bytes
    (a gzip-stored vector expanded) under a random name ending ``.rlarchive``, alone in a fresh folder
    inside ``tmp``. The caller removes the folder when the case is over."""
    src = case_path(vectors, case, case["file"])
    folder = tempfile.mkdtemp(dir=tmp)
    path = os.path.join(folder, secrets.token_hex(8) + ".rlarchive")
    try:
        with gzip.open(src, "rb") if src.endswith(".gz") else open(src, "rb") as fsrc, open(path, "wb") as dst:
            shutil.copyfileobj(fsrc, dst, 1 << 20)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return folder, path


# dtype code -> struct format of one element (little-endian), for judging actions without NumPy
_ELEMENT = {
    "BOOL": "?",
    "U8": "B",
    "I8": "b",
    "U16": "H",
    "I16": "h",
    "U32": "I",
    "I32": "i",
    "U64": "Q",
    "I64": "q",
    "F16": "e",
    "F32": "f",
    "F64": "d",
}


def _elements(value: Any) -> tuple[Any, ...]:
    """(dtype, shape, elements) of an inline ndarray value; raises ValueError for anything else."""
    if not (
        isinstance(value, dict)
        and value.get("$type") == "ndarray"
        and "base64" in value
        and value.get("dtype") in _ELEMENT
    ):
        raise ValueError(f"not an inline ndarray of a known dtype: {str(value)[:120]}")
    raw = base64.b64decode(value["base64"], validate=True)
    fmt = _ELEMENT[value["dtype"]]
    n = len(raw) // struct.calcsize(fmt)
    count = 1
    for d in value["shape"]:
        count *= d
    if n != count or n * struct.calcsize(fmt) != len(raw):
        raise ValueError("the bytes do not match the shape")
    return value["dtype"], list(value["shape"]), struct.unpack(f"<{n}{fmt}", raw)


def same_actions(got: Any, want: Any) -> str:
    """ "" when ``got`` equals ``want`` as RLA_policy §7 says (integers exactly, floats within 1e-4 absolute or relative), else why not."""
    if not isinstance(got, list) or len(got) != len(want):
        return f"expected {len(want)} actions, got {len(got) if isinstance(got, list) else got!r}"
    for i, (g, w) in enumerate(zip(got, want)):
        try:
            gd, gs, ge = _elements(g)
        except ValueError as e:
            return f"action {i}: {e}"
        wd, ws, we = _elements(w)
        if (gd, gs) != (wd, ws):
            return f"action {i}: {gd}{gs}, expected {wd}{ws}"
        for k, (a, b) in enumerate(zip(ge, we)):
            ok = (
                a == b
                if not wd.startswith("F")
                else (a == b or (a != a and b != b) or abs(a - b) <= max(1e-4, 1e-4 * abs(b)))
            )  # NaN equals NaN
            if not ok:
                return f"action {i}, element {k}: {a!r}, expected {b!r}"
    return ""


def judge_report(case: dict[str, Any], reply: dict[str, Any]) -> tuple[str, str]:
    """A validate answer (Annex A): the report's issues, by code, severity and location
    (member, pointer, offset: spec §11.2), in order; messages are free."""
    if reply.get("result") != "report" or not isinstance(reply.get("report"), dict):
        return (
            "fail",
            f"validate: expected a report, got {reply.get('code', reply.get('result'))}: {str(reply.get('message', ''))[:160]}",
        )
    issues = reply["report"].get("issues")
    if not isinstance(issues, list):
        return "fail", "validate: the report has no issues list"
    got = [
        {k: i[k] for k in ("code", "severity", "member", "pointer", "offset") if isinstance(i, dict) and k in i}
        for i in issues
    ]
    if got != case["issues"]:
        return "fail", f"validate: issues {got}, expected {case['issues']}"
    return "pass", ""


def judge(vectors: str, case: dict[str, Any], reply: dict[str, Any]) -> tuple[str, str]:
    exp = case["expect"]
    result = reply.get("result")
    if result == "skipped":
        return "skip", reply.get("reason", "")
    if exp["result"] == "actions":
        if result != "actions":
            return "fail", f"expected actions, got {reply.get('code', result)}: {reply.get('message', '')[:160]}"
        want = read_json(case_path(vectors, case, exp["predict_file"]))["actions"]
        why = same_actions(reply.get("actions"), want)
        return ("fail", why) if why else ("pass", "")
    if exp["result"] == "error":
        if result == "error" and reply.get("code") == exp["code"]:
            return "pass", ""
        got = reply.get("code") if result == "error" else result
        return "fail", f"expected {exp['code']}, got {got}: {reply.get('message', '')[:160]}"
    if result != "dump":
        return "fail", f"expected a dump, got {reply.get('code', result)}: {reply.get('message', '')[:160]}"
    with open(case_path(vectors, case, exp["dump_file"]), "rb") as f:
        want = f.read()
    got = reply.get("dump", "")
    if not isinstance(got, str) or got.encode("utf-8") != want:
        g = got.encode("utf-8") if isinstance(got, str) else b""
        i = next((k for k in range(min(len(g), len(want))) if g[k] != want[k]), min(len(g), len(want)))
        return (
            "fail",
            f"dump differs at byte {i}: got {g[max(0, i - 40) : i + 40]!r}, want {want[max(0, i - 40) : i + 40]!r}",
        )
    return "pass", ""


def request_kind(case: dict[str, Any]) -> str:
    """The request a case is judged on: ``line`` (the bytes of its request file, Annex A.5), ``predict`` or ``dump``."""
    if "request_file" in case:
        return "line"
    return "predict" if case["expect"]["result"] == "actions" else "dump"


def ask(testee: Testee, vectors: str, case: dict[str, Any], path: str) -> tuple[dict[str, Any], str]:
    """Send a case's request: its request file's line, ``predict`` (with the observations of its predict
    file) or ``dump``; (the answer, "" or why its ``seq`` is wrong)."""
    kind = request_kind(case)
    if kind == "line":
        seq, reply = testee.request_line(_read_stored(case_path(vectors, case, case["request_file"])), path)
        want = None if case.get("seq_unreadable") else seq
        wrong = (
            "" if reply.get("seq", "") == want else f"answered seq {reply.get('seq', '(none)')!r}, expected {want!r}"
        )
        return reply, wrong
    if kind == "predict":
        spec = read_json(case_path(vectors, case, case["expect"]["predict_file"]))
        fields = {k: spec[k] for k in ("observations", "episode_starts", "action_masks") if k in spec}
        return testee.request("predict", path, **fields), ""
    return testee.request("dump", path), ""


def run_reader(
    name: str, cmd: list[Any], cases: list[Any], vectors: str, xfail: dict[str, Any], timeout: float, tmp: str, cwd: str
) -> dict[str, Any]:
    testee = Testee(name, cmd, timeout, cwd)
    results: dict[str, Any] = {}
    try:
        testee.start()
    except (TesteeDied, TimeoutError, OSError) as e:
        testee.stop(kill=True)
        return {c["id"]: ("crash", f"cannot start reader: {e}") for c in cases}
    try:
        _run_cases(testee, cases, vectors, xfail, timeout, tmp, results)
        testee.stop()
    finally:
        testee.stop(kill=True)  # whatever happened, nothing of the testee outlives the run
    results["__info__"] = testee.info
    results["__declared__"] = sorted(testee.requests)
    return results


def _run_cases(
    testee: Testee,
    cases: list[Any],
    vectors: str,
    xfail: dict[str, Any],
    timeout: float,
    tmp: str,
    results: dict[str, Any],
) -> None:
    """Each case through the testee, its result into ``results`` (case id -> (status, detail)), and under
    ``__requests__`` how many requests of each kind were judged (Annex A.3)."""
    kinds = results.setdefault("__requests__", {k: 0 for k in REQUEST_KINDS})
    for c in cases:
        missing = [x for x in c.get("extensions", []) if x not in testee.extensions]
        if missing:
            results[c["id"]] = ("n/a", f"not sent: the reader does not declare {', '.join(missing)}")
            continue
        if hasattr(testee, "stderr"):
            testee.stderr.clear()  # what the testee writes for this case only
        folder = None
        try:
            folder, path = stage(vectors, c, tmp)
            kinds[request_kind(c)] += 1
            reply, wrong_seq = ask(testee, vectors, c, path)
            status, detail = ("fail", wrong_seq) if wrong_seq else judge(vectors, c, reply)
            if status == "pass" and "validate" in testee.requests and "issues" in c:
                kinds["validate"] += 1
                status, detail = judge_report(c, testee.request("validate", path))
        except TimeoutError:
            status, detail = "timeout", f"no answer within {timeout} s"
        except TesteeDied as e:
            status, detail = "crash", str(e)
            testee.stop(kill=True)
        except OSError as e:
            status, detail = "crash", f"cannot start reader: {e}"
        finally:
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)
        if status in ("fail", "crash", "timeout", "skip"):
            detail += testee.stderr_tail()
        if c["id"] in xfail:
            if status == "pass":
                status, detail = (
                    "xpass",
                    f"listed as expected failure ({xfail[c['id']]}) but passed: remove it from the list",
                )
            elif status == "fail":
                status, detail = "xfail", xfail[c["id"]]
        results[c["id"]] = (status, detail)


def handshake_name(info: Any) -> str:
    """The reader's name from its handshake (``reader.name``), as one short printable word, or ``""``."""
    name = info.get("name") if isinstance(info, dict) else None
    if not isinstance(name, str):
        return ""
    return "".join(ch if ch.isprintable() and not ch.isspace() else "_" for ch in name)[:40]


def vectors_dir() -> str:
    """The test vectors of this format version: the checkout's test-vectors/ (an editable install, where the
    vectors are kept once), else the copy inside the package (or the kit) that the build made."""
    here = os.path.dirname(os.path.abspath(__file__))
    # in the package (rlarchive/conformance/): the checkout's, then the package's; the kit's run.py: beside it
    candidates = (
        (os.path.join(here, "..", "..", "..", "test-vectors"), os.path.join(here, "..", "vectors"))
        if __package__
        else (os.path.join(here, "vectors"),)
    )
    for candidate in candidates:
        if os.path.isfile(os.path.join(candidate, "index.json")):
            return os.path.abspath(candidate)
    raise SystemExit("rlarchive conformance: this installation carries no test vectors")


def _readers(args: argparse.Namespace, registered: str | None) -> list[Any]:
    """The readers to run: the outside reader of --reader-cmd, or the registered ones (--readers picks some)."""
    if args.reader_cmd:  # an outside reader runs in, and its paths resolve from, the caller's folder
        xf = os.path.abspath(args.xfail) if args.xfail else None
        # "named": no --reader-name, so the name its handshake gives replaces "outside" once it has run
        readers: list[dict[str, Any]] = [
            {
                "name": args.reader_name or "outside",
                "cmd": shlex.split(args.reader_cmd),
                "xfail": xf,
                "cwd": os.getcwd(),
                "named": args.reader_name is None,
            }
        ]
    else:
        assert registered is not None  # main checked it
        readers = read_json(registered)["readers"]
        root = os.path.abspath(
            os.path.join(os.path.dirname(registered), "..", "..")
        )  # tests/conformance/ -> the repository
        for r in readers:  # registered commands and xfail lists are relative to the repository's root
            r["cwd"] = root
            if r.get("xfail") and not os.path.isabs(r["xfail"]):
                r["xfail"] = os.path.join(root, r["xfail"])
        if args.readers:
            wanted = set(args.readers.split(","))
            readers = [r for r in readers if r["name"] in wanted]
    return readers


def _generated(seed: int, count: int, out: str) -> list[dict[str, Any]] | str:
    """The generated cases of ``seed`` (Annex A.6), their files written into ``out``; or why there are none."""
    if count <= 0:
        return []
    try:
        if __package__:
            from .generated import generated_cases
        else:  # run.py of the standalone kit: the installed package generates them, when there is one
            from rlarchive.conformance.generated import generated_cases
    except ImportError as e:
        return f"generated cases: none, they need the rlarchive package and NumPy (pip install rlarchive): {e}"
    return generated_cases(seed, out, count)


def _arguments(prog: str) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vectors", default=None, help="folder with index.json (default: the vectors inside this package)")
    ap.add_argument("--reader-cmd", help="command of an outside reader (shell-quoted)")
    ap.add_argument(
        "--reader-name",
        help="name of the outside reader in the matrix (default: the name its handshake gives, else 'outside')",
    )
    ap.add_argument("--xfail", help="expected-failure list of the outside reader (JSON: case id -> reason)")
    ap.add_argument("--readers", help="comma-separated registered readers to run (default: all)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per case")
    ap.add_argument("--quiet", action="store_true", help="print only rows with an unexpected result")
    ap.add_argument("--report", help="write the results as JSON here")
    ap.add_argument("--junit", help="write the results as JUnit XML here (one test case per reader and case)")
    ap.add_argument(
        "--seed", type=int, help="seed of the generated cases (Annex A.6; default: a new one each run, printed)"
    )
    ap.add_argument(
        "--generated",
        type=int,
        default=GENERATED_COUNT,
        metavar="N",
        help=f"random archives and random policies to generate, N of each (default {GENERATED_COUNT}; 0: none)",
    )
    return ap


def _run_all(
    readers: list[Any], golden: list[Any], args: argparse.Namespace, seed: int
) -> tuple[list[Any], dict[str, dict[str, Any]]]:
    """(every case run: the golden ones, then the generated ones; reader name -> its results)."""
    all_results: dict[str, dict[str, Any]] = {}
    # the generated cases' files (with their expected answers) stay out of the folder the copies are staged in
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as generated_folder:
        generated = _generated(seed, args.generated, generated_folder)
        if isinstance(generated, str):
            print(generated)
            generated = []
        elif generated:
            print(f"generated cases: {len(generated)} from seed {seed} (the same cases again: --seed {seed})")
        cases = golden + generated
        for r in readers:
            xfail = {}
            if r.get("xfail"):
                xfail = read_json(r["xfail"])
            t0 = time.monotonic()
            results = run_reader(r["name"], r["cmd"], cases, args.vectors, xfail, args.timeout, tmp, r["cwd"])
            results["__seconds__"] = time.monotonic() - t0
            results["__seed__"] = seed if generated else None
            if r.get("named"):  # no --reader-name: the name the reader's handshake gave
                r["name"] = handshake_name(results.get("__info__", {})) or r["name"]
            all_results[r["name"]] = results
    return cases, all_results


def main(argv: list[Any] | None = None, registered: str | None = None, prog: str = "rlarchive conformance") -> int:
    """Run the harness; ``registered`` is a readers.json listing readers to run when no --reader-cmd is given."""
    ap = _arguments(prog)
    args = ap.parse_args(argv)
    if args.vectors is None:
        args.vectors = vectors_dir()
    if not args.reader_cmd and registered is None:
        ap.error("give the reader to test: --reader-cmd CMD")
    golden = load_cases(args.vectors)
    readers = _readers(args, registered)
    seed = secrets.randbelow(2**32) if args.seed is None else args.seed
    cases, all_results = _run_all(readers, golden, args, seed)
    names = [r["name"] for r in readers]
    print_matrix(cases, names, all_results, args.quiet, {"generated": f"generated cases (seed {seed})"})
    total_pass, total_fail = print_summary(cases, names, all_results)
    if args.report:
        with open(args.report, "w", encoding="utf-8") as f:
            json.dump({n: {k: v for k, v in all_results[n].items()} for n in names}, f, indent=1)
    if args.junit:
        write_junit(args.junit, names, cases, all_results)
    seeded = f" (generated cases: seed {seed})" if len(cases) > len(golden) else ""
    print(f"conformance: {total_pass} passed, {total_fail} failed{seeded}")
    return 1 if total_fail or not readers else 0


if __name__ == "__main__":  # the standalone kit: python run.py --reader-cmd CMD
    sys.exit(main(prog=os.path.basename(sys.argv[0])))
