#!/usr/bin/env python3
"""The Python reference reader as a conformance testee (spec Annex A protocol).

Every request line gets exactly one answer line (``stop`` excepted): a line
that is not a request of Annex A.2 is answered ``INPUT_INVALID`` as Annex A.5
says, and anything the reader did not expect is answered ``INTERNAL_ERROR``
(with its traceback on standard error) rather than ending the process.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from typing import Any

import rlarchive
from rlarchive import jsonbounds, jsonstrict
from rlarchive.conformance.protocol import bounded_lines
from rlarchive.limits import MAX_INPUT_JSON_MEMORY, MAX_JSON_BYTES
from rlarchive.manifest import SUPPORTED_EXTENSIONS
from rlarchive.version import NAME, VERSION

#: The requests this testee answers about a file (the handshake lists the ones besides ``dump``).
FILE_REQUESTS = ("dump", "predict", "validate")


class Malformed(Exception):
    """A line that is not a request of Annex A.2; ``seq`` is the request's when it could be read."""

    def __init__(self, message: str, seq: int | None = None) -> None:
        super().__init__(message)
        self.seq = seq


def _form(req: dict[str, Any], seq: int) -> None:
    """The members of a file request, by their JSON types (Annex A.5); raises :class:`Malformed`."""
    path = req.get("file")
    if not isinstance(path, str) or "\x00" in path or not os.path.isabs(path):
        raise Malformed("'file' must be an absolute path (a string)", seq)
    if req["cmd"] != "predict":
        return
    observations = req.get("observations")
    if not isinstance(observations, list):
        raise Malformed("'observations' must be an array", seq)
    starts = req.get("episode_starts", [False] * len(observations))
    if not (isinstance(starts, list) and len(starts) == len(observations) and all(type(s) is bool for s in starts)):
        raise Malformed("'episode_starts' must be an array of booleans, one per observation", seq)
    masks = req.get("action_masks", observations)
    if not (isinstance(masks, list) and len(masks) == len(observations)):
        raise Malformed("'action_masks' must be an array, one mask per observation", seq)


def parse_request(line: bytes) -> dict[str, Any]:
    """A request line as a request of Annex A.2, its form checked in the order of Annex A.5."""
    if jsonbounds.json_cost(line) > MAX_INPUT_JSON_MEMORY:  # parsed only within the bound of a caller's JSON (§15)
        raise Malformed(f"the request could take more than {MAX_INPUT_JSON_MEMORY} bytes to parse")
    try:
        req = jsonstrict.parse(line)
    except rlarchive.RlarchiveError as e:
        raise Malformed(f"the line is not a JSON text of spec §6 ({e.code}: {e.message})") from None
    if not isinstance(req, dict):
        raise Malformed("the request is not a JSON object")
    cmd = req.get("cmd")
    if cmd in ("start", "stop"):
        return req
    seq = req.get("seq")
    seq = seq if type(seq) is int else None
    if cmd not in FILE_REQUESTS:
        raise Malformed(f"unknown request {str(cmd)[:40]!r}" if "cmd" in req else "the request has no 'cmd'", seq)
    if seq is None:
        raise Malformed("'seq' must be an integer")
    _form(req, seq)
    return req


def predict(req: dict[str, Any]) -> dict[str, Any]:
    """Annex A predict: the archive's portable policy over the request's observations."""
    from rlarchive.extensions.policy.evaluator import act
    from rlarchive.values import dump_value, load_value

    with rlarchive.open(req["file"], spaces="neutral") as ar:
        ar.check_extensions()
        policy = ar.policy()
    if policy is None:  # the request does not fit the archive (Annex A.5)
        raise rlarchive.RlarchiveError("INPUT_INVALID", "the archive has no portable policy (RLA_policy)")
    try:
        observations = [load_value(v, f"/observations/{i}") for i, v in enumerate(req["observations"])]
        masks = req.get("action_masks")
        masks = None if masks is None else [load_value(v, f"/action_masks/{i}") for i, v in enumerate(masks)]
    except rlarchive.RlarchiveError as e:  # not a value of spec §7
        raise rlarchive.RlarchiveError(
            "INPUT_INVALID", f"the request holds a value that is not one of spec §7: {e}"
        ) from None
    actions = act(policy, observations, req.get("episode_starts"), masks)
    return {"result": "actions", "actions": [dump_value(a) for a in actions]}


def answer(req: dict[str, Any]) -> dict[str, Any]:
    """The answer to a well-formed file request (``dump``, ``predict``, ``validate``)."""
    seq = req["seq"]
    try:
        if req["cmd"] == "validate":
            return {"seq": seq, "result": "report", "report": rlarchive.validate(req["file"])}
        if req["cmd"] == "predict":
            return {"seq": seq, **predict(req)}
        with rlarchive.open(req["file"], spaces="neutral") as ar:
            return {"seq": seq, "result": "dump", "dump": ar.dump().decode("utf-8")}
    except rlarchive.RlarchiveError as e:
        return {"seq": seq, "result": "error", "code": e.code, "message": str(e)}


def handshake(req: dict[str, Any]) -> dict[str, Any]:
    protocol = req.get("protocol")
    if not (type(protocol) is int and protocol == 1):
        return {"ok": False}
    return {
        "ok": True,
        "protocol": 1,
        "reader": {"name": NAME, "version": VERSION, "language": "python"},
        "extensions": sorted(SUPPORTED_EXTENSIONS),
        "requests": ["predict", "validate"],
    }


def reply_to(line: bytes | None) -> dict[str, Any] | None:
    """The answer to one request line (None: a line longer than the limit); None answers ``stop``."""
    seq = None
    try:
        if line is None:
            raise Malformed(f"the request line is longer than {MAX_JSON_BYTES} bytes")
        req = parse_request(line)
        if req["cmd"] == "stop":
            return None
        if req["cmd"] == "start":
            return handshake(req)
        seq = req["seq"]
        return answer(req)
    except Malformed as e:
        return {"seq": e.seq, "result": "error", "code": "INPUT_INVALID", "message": str(e)}
    except Exception as e:  # never expected: reported as a failure, not a dead process
        traceback.print_exc(file=sys.stderr)
        return {"seq": seq, "result": "error", "code": "INTERNAL_ERROR", "message": f"{type(e).__name__}: {e}"}


def main() -> int:
    out = sys.stdout.buffer
    for line, complete in bounded_lines(sys.stdin.buffer, MAX_JSON_BYTES, preview=0):
        reply = reply_to(line if complete else None)
        if reply is None:
            return 0
        if reply.get("ok") is False:  # a protocol it does not speak: refused, then it exits
            out.write(json.dumps(reply).encode("ascii") + b"\n")
            out.flush()
            return 0
        out.write(json.dumps(reply, ensure_ascii=True).encode("ascii") + b"\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
