#!/usr/bin/env python3
"""The Python reader as a fuzzing testee: the conformance protocol (spec Annex A), plus

- for an accepted archive, every value is decoded (``data``, each optimizer,
  every tensor), so that a crash in decoding is found too;
- ``"validate"`` in each answer: the first error code of ``rlarchive.validate``
  (or null), which must agree with the reader (spec §14);
- any exception other than RlarchiveError is answered as the code
  INTERNAL_ERROR with its traceback instead of killing the process.
"""

import json
import sys
import traceback

import rlarchive
from rlarchive.version import NAME, VERSION

PHASE = ["open"]


def deep_read(path: str) -> bytes:
    PHASE[0] = "open"
    with rlarchive.open(path, spaces="neutral") as ar:
        PHASE[0] = "dump"
        text = ar.dump()
        PHASE[0] = "data"
        ar.data  # noqa: B018  (the property decodes: what is fuzzed)
        PHASE[0] = "optimizers"
        for name in ar.optimizer_names:
            ar.optimizer(name)
        PHASE[0] = "tensors"
        for g in ar.groups:
            for t in ar.tensors(g).values():
                getattr(t, "raw", t).tobytes()
        return text


def first_error(path: str):
    report = rlarchive.validate(path)
    errors = [i["code"] for i in report["issues"] if i["severity"] == "error"]
    if report["valid"] != (not errors):
        raise AssertionError("validation report: 'valid' disagrees with its issues")
    return errors[0] if errors else None


def answer(req: dict) -> dict:
    seq = req["seq"]
    try:
        reply = {"seq": seq, "result": "dump", "dump": deep_read(req["file"]).decode("utf-8")}
    except rlarchive.RlarchiveError as e:
        reply = {"seq": seq, "result": "error", "code": e.code, "message": str(e)[:500], "phase": PHASE[0]}
    except BaseException:  # noqa: BLE001 - a crash is what we are looking for
        return {
            "seq": seq,
            "result": "error",
            "code": "INTERNAL_ERROR",
            "message": "reader: " + traceback.format_exc()[-3000:],
            "phase": PHASE[0],
        }
    try:
        reply["validate"] = first_error(req["file"])
    except BaseException:  # noqa: BLE001
        return {
            "seq": seq,
            "result": "error",
            "code": "INTERNAL_ERROR",
            "message": "validator: " + traceback.format_exc()[-3000:],
        }
    return reply


def main() -> int:
    sys.setrecursionlimit(10000)
    out = sys.stdout
    for line in sys.stdin:
        req = json.loads(line)
        cmd = req.get("cmd")
        if cmd == "start":
            reply = {
                "ok": req.get("protocol") == 1,
                "protocol": 1,
                "reader": {"name": NAME, "version": VERSION, "language": "python"},
            }
        elif cmd == "dump":
            reply = answer(req)
        elif cmd == "stop":
            return 0
        else:
            reply = {"ok": False, "error": f"unknown command {cmd!r}"}
        out.write(json.dumps(reply) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
