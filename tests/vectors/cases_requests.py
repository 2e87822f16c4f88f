"""Cases of the conformance protocol itself (spec Annex A.5): requests that are not requests of Annex A.2.

Each case is a request line, sent instead of the case's dump or predict
request, with ``$SEQ`` standing for the request's sequence number and
``$FILE`` for the path of the case's copy of an archive (as a JSON string).
A testee answers every line with exactly one line: a malformed one with the
error ``INPUT_INVALID``, whose ``seq`` is the request's when the line is a
JSON object with an integer ``seq``, else null. The order of A.5 (the form
of the request, then the archive, then the observations) is pinned by
cases that break two of them.
"""

from __future__ import annotations

import base64
import json

import numpy as np
from cases import CASES, Case

from rlarchive.limits import MAX_JSON_BYTES, MAX_JSON_DEPTH

POLICY = "RLA_policy"
DICT_POLICY = "policy-ppo-dict-observation"  # a Dict of pos (Box [3]) and mode (Discrete(3)), two actions
DISCRETE_POLICY = "policy-ppo-discrete-obs-box-action"  # a Discrete observation


def _request(
    id: str,
    description: str,
    line: bytes | str,
    file_of: str = "minimal",
    expect: str = "INPUT_INVALID",
    seq_unreadable: bool = False,
    extensions: tuple = (),
    gzip: bool = False,
) -> None:
    """Register a request case: ``line`` sent for the archive of the case ``file_of``."""
    ref = next(c for c in CASES if c.id == file_of)
    raw = line.encode("utf-8") if isinstance(line, str) else line
    assert b"\n" not in raw, "a request is one line"
    CASES.append(
        Case(
            id,
            description,
            ["§A.5"],
            expect,
            ref.build,
            gzip=ref.gzip,
            extensions=list(extensions) or list(ref.extensions),
            file_id=file_of,
            request=lambda: raw,
            seq_unreadable=seq_unreadable,
            request_gzip=gzip,
        )
    )


def _nd(array: np.ndarray) -> dict:
    """An inline ndarray value (§7.6)."""
    dtype = {"float32": "F32", "int64": "I64", "int8": "I8"}[array.dtype.name]
    return {
        "$type": "ndarray",
        "dtype": dtype,
        "shape": list(array.shape),
        "base64": base64.b64encode(array.tobytes()).decode(),
    }


def _predict(fields: dict, file_of: str = DICT_POLICY) -> str:
    """A predict request line with these fields after cmd, seq and file."""
    body = json.dumps(fields)[1:-1]
    return '{"cmd": "predict", "seq": $SEQ, "file": $FILE' + (", " + body if body else "") + "}"


_DICT_OBS = {"pos": _nd(np.array([0.5, -0.25, 1.0], np.float32)), "mode": _nd(np.array(1, np.int64))}

# -- lines that are not a request: no seq can be read -------------------------------------------

for _id, _what, _line in (
    ("request-not-json", "a line that is not JSON", "dump this file please"),
    ("request-empty-line", "an empty line", ""),
    ("request-not-object", "a JSON array", '["dump", $SEQ, $FILE]'),
    (
        "request-not-utf8",
        "a line that is not UTF-8 (§6)",
        b'{"cmd": "dump", "seq": $SEQ, "file": $FILE, "note": "\xff"}',
    ),
    (
        "request-duplicate-key",
        "a JSON object with seq twice (§6)",
        '{"cmd": "dump", "seq": $SEQ, "seq": $SEQ, "file": $FILE}',
    ),
    ("request-nan-literal", "a NaN literal (§6)", '{"cmd": "dump", "seq": $SEQ, "file": $FILE, "x": NaN}'),
    (
        "request-too-deep",
        f"arrays nested 100,000 deep, far beyond MAX_JSON_DEPTH ({MAX_JSON_DEPTH}, §6)",
        '{"cmd": "dump", "seq": $SEQ, "file": $FILE, "x": ' + "[" * 100_000 + "]" * 100_000 + "}",
    ),
    ("request-seq-missing", "a dump request without seq", '{"cmd": "dump", "file": $FILE}'),
    ("request-seq-float", "a seq written as a float literal", '{"cmd": "dump", "seq": $SEQ.0, "file": $FILE}'),
    ("request-seq-string", "a seq that is a string", '{"cmd": "dump", "seq": "$SEQ", "file": $FILE}'),
):
    _request(
        _id,
        f"A request line that is {_what}: INPUT_INVALID, answered with seq null (the testee cannot read the request's seq).",
        _line,
        seq_unreadable=True,
    )

_request(
    "request-line-too-long",
    f"A dump request line of more than MAX_JSON_BYTES ({MAX_JSON_BYTES}) bytes, padded by a long string: INPUT_INVALID with seq null; the testee reads it a piece at a time, never whole, and answers the next request as usual (stored gzipped).",
    '{"cmd": "dump", "seq": $SEQ, "file": $FILE, "pad": "' + "x" * (MAX_JSON_BYTES + 16) + '"}',
    seq_unreadable=True,
    gzip=True,
)

# -- requests whose seq can be read: the answer carries it -------------------------------------

for _id, _what, _line in (
    ("request-cmd-missing", "has no cmd", '{"seq": $SEQ, "file": $FILE}'),
    (
        "request-cmd-unknown",
        "asks for a request Annex A.2 does not define",
        '{"cmd": "inspect", "seq": $SEQ, "file": $FILE}',
    ),
    ("request-cmd-not-string", "has a number for cmd", '{"cmd": 7, "seq": $SEQ, "file": $FILE}'),
    ("request-file-missing", "has no file", '{"cmd": "dump", "seq": $SEQ}'),
    ("request-validate-file-missing", "asks to validate no file", '{"cmd": "validate", "seq": $SEQ}'),
    ("request-file-not-string", "gives the file as an array", '{"cmd": "dump", "seq": $SEQ, "file": [$FILE]}'),
    ("request-file-relative", "gives a relative path", '{"cmd": "dump", "seq": $SEQ, "file": "minimal.rlarchive"}'),
    (
        "request-file-url",
        "gives a URL for the file (a testee opens local paths only: it connects to nothing)",
        '{"cmd": "dump", "seq": $SEQ, "file": "http://127.0.0.1:9/minimal.rlarchive"}',
    ),
):
    _request(_id, f"A request that {_what}: INPUT_INVALID, answered with its seq.", _line)

_request(
    "request-members-not-defined",
    "A dump request with a member Annex A.2 does not define: the member is ignored and the archive dumped.",
    '{"cmd": "dump", "seq": $SEQ, "file": $FILE, "priority": {"level": 3}}',
    expect="dump",
)

# -- predict requests ---------------------------------------------------------------------------

for _id, _what, _fields in (
    ("request-predict-observations-missing", "without observations", {}),
    ("request-predict-observations-not-array", "whose observations are an object", {"observations": _DICT_OBS}),
    (
        "request-predict-episode-starts-wrong-length",
        "with two episode starts for one observation",
        {"observations": [_DICT_OBS], "episode_starts": [True, False]},
    ),
    (
        "request-predict-episode-starts-not-boolean",
        "whose episode starts are numbers",
        {"observations": [_DICT_OBS], "episode_starts": [1]},
    ),
    (
        "request-predict-episode-starts-null",
        "whose episode_starts is null (a member given is never null)",
        {"observations": [_DICT_OBS], "episode_starts": None},
    ),
    (
        "request-predict-masks-wrong-length",
        "with no action mask for its one observation",
        {"observations": [_DICT_OBS], "action_masks": []},
    ),
    (
        "request-predict-dict-mixed-batch",
        "whose Dict observation gives pos as a batch of 2 and mode as one observation (RLA_policy §4: one or a batch, key by key alike)",
        {"observations": [{"pos": _nd(np.zeros((2, 3), np.float32)), "mode": _nd(np.array(1, np.int64))}]},
    ),
    (
        "request-predict-dict-key-missing",
        "whose Dict observation lacks the key mode",
        {"observations": [{"pos": _DICT_OBS["pos"]}]},
    ),
    (
        "request-predict-observation-wrong-shape",
        "whose pos has shape [4] for a space of shape [3]",
        {"observations": [{**_DICT_OBS, "pos": _nd(np.zeros(4, np.float32))}]},
    ),
    (
        "request-predict-observation-not-a-value",
        "whose pos is an ndarray with a base64 that is not base64 (not a value of §7)",
        {"observations": [{**_DICT_OBS, "pos": {"$type": "ndarray", "dtype": "F32", "shape": [3], "base64": "!!"}}]},
    ),
    (
        "request-predict-observation-reference",
        "whose pos references a tensor (a request has no tensor group: arrays are inline)",
        {
            "observations": [
                {
                    **_DICT_OBS,
                    "pos": {"$type": "ndarray", "dtype": "F32", "shape": [3], "ref": {"group": "policy", "name": "x"}},
                }
            ]
        },
    ),
    (
        "request-predict-mask-wrong-width",
        "with an action mask of 3 entries for a head of 2 actions",
        {"observations": [_DICT_OBS], "action_masks": [_nd(np.array([1, 1, 1], np.int8))]},
    ),
):
    _request(
        _id, f"A predict request {_what}: INPUT_INVALID, answered with its seq.", _predict(_fields), file_of=DICT_POLICY
    )

_request(
    "request-predict-discrete-out-of-range",
    "A predict request whose Discrete observation is 1000 for a space of 5 values (RLA_policy §4: an error of the caller, not of the archive): INPUT_INVALID.",
    _predict({"observations": [_nd(np.array(1000, np.int64))]}),
    file_of=DISCRETE_POLICY,
)
_request(
    "request-predict-no-policy",
    "A well-formed predict request for an archive without a portable policy (it uses no RLA_policy): INPUT_INVALID, the request does not fit the archive.",
    _predict({"observations": [_DICT_OBS]}),
    file_of="minimal",
    extensions=(POLICY,),
)
_request(
    "request-predict-form-before-archive",
    "A predict request without observations for a file that is not an rlarchive: INPUT_INVALID, the request's form is checked before the file is opened (A.5), not ARCHIVE_NOT_RLARCHIVE.",
    _predict({}),
    file_of="not-rlarchive-plain-zip",
    extensions=(POLICY,),
)
_request(
    "request-predict-archive-before-observations",
    "A well-formed predict request whose observation fits no policy, for a file that is not an rlarchive: ARCHIVE_NOT_RLARCHIVE, the archive is checked before its policy is given the observations (A.5).",
    _predict({"observations": [{"pos": _nd(np.zeros(9, np.float32))}]}),
    file_of="not-rlarchive-plain-zip",
    expect="ARCHIVE_NOT_RLARCHIVE",
    extensions=(POLICY,),
)
