#!/usr/bin/env python3
"""The Python reference reader as a conformance testee (spec Annex A protocol)."""

import json
import sys

import rlarchive
from rlarchive.cli.common import MAX_INPUT_JSON_BYTES, parse_input
from rlarchive.manifest import SUPPORTED_EXTENSIONS


def predict(req: dict) -> dict:
    """Annex A predict: the archive's portable policy over the request's observations."""
    from rlarchive.policy import act
    from rlarchive.values import dump_value, load_value

    seq = req["seq"]
    try:
        with rlarchive.open(req["file"], spaces="neutral") as ar:
            ar.check_extensions()
            policy = ar.policy()
    except rlarchive.RlarchiveError as e:
        return {"seq": seq, "result": "error", "code": e.code, "message": str(e)}
    if policy is None:
        return {"seq": seq, "result": "skipped", "reason": "the archive has no portable policy (RLA_policy)"}
    observations = [load_value(v) for v in req["observations"]]
    masks = [load_value(v) for v in req["action_masks"]] if "action_masks" in req else None
    actions = act(policy, observations, req.get("episode_starts"), masks)
    return {"seq": seq, "result": "actions", "actions": [dump_value(a) for a in actions]}


def requests(stream):
    """Each request line (blank ones skipped) as (the parsed request, None), or (None, why not) for a line that is
    too long, not JSON, or beyond the bounds of a caller's JSON (spec §15, Annex A.1): no line is held longer than
    MAX_INPUT_JSON_BYTES, nor parsed beyond MAX_JSON_DEPTH or MAX_INPUT_JSON_MEMORY."""
    while True:
        line = stream.readline(MAX_INPUT_JSON_BYTES + 1)
        if not line:
            return
        if len(line) > MAX_INPUT_JSON_BYTES:
            while line and not line.endswith(b"\n"):  # the rest of the line, unread
                line = stream.readline(1 << 20)
            yield None, f"request line longer than {MAX_INPUT_JSON_BYTES} bytes"
        elif line.strip():
            try:
                yield parse_input(line, "request"), None
            except rlarchive.RlarchiveError as e:
                yield None, str(e)


def main() -> int:
    out = sys.stdout
    for req, bad in requests(sys.stdin.buffer):
        cmd = req.get("cmd") if isinstance(req, dict) else None
        if cmd == "start":
            ok = req.get("protocol") == 1
            reply = {
                "ok": ok,
                "protocol": 1,
                "reader": {"name": "rlarchive-python", "version": rlarchive.__version__, "language": "python"},
                "extensions": sorted(SUPPORTED_EXTENSIONS),
                "requests": ["predict", "validate"],
            }
        elif cmd == "dump":
            try:
                with rlarchive.open(req["file"], spaces="neutral") as ar:
                    reply = {"seq": req["seq"], "result": "dump", "dump": ar.dump().decode("utf-8")}
            except rlarchive.RlarchiveError as e:
                reply = {"seq": req["seq"], "result": "error", "code": e.code, "message": str(e)}
        elif cmd == "predict":
            reply = predict(req)
        elif cmd == "validate":
            reply = {"seq": req["seq"], "result": "report", "report": rlarchive.validate(req["file"])}
        elif cmd == "stop":
            return 0
        elif bad is not None:
            reply = {"ok": False, "error": bad}
        else:
            reply = {"ok": False, "error": f"unknown command {cmd!r}"}
        out.write(json.dumps(reply, ensure_ascii=False) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
