#!/usr/bin/env python3
"""The Python reference reader as a conformance testee (spec Annex A protocol)."""
import json
import sys

import rlarchive


def main() -> int:
    out = sys.stdout
    for line in sys.stdin:
        req = json.loads(line)
        cmd = req.get("cmd")
        if cmd == "start":
            ok = req.get("protocol") == 1
            reply = {"ok": ok, "protocol": 1, "reader": {"name": "rlarchive-python", "version": rlarchive.__version__, "language": "python"}}
        elif cmd == "dump":
            try:
                with rlarchive.open(req["file"], spaces="neutral") as ar:
                    reply = {"seq": req["seq"], "result": "dump", "dump": ar.dump().decode("utf-8")}
            except rlarchive.RlarchiveError as e:
                reply = {"seq": req["seq"], "result": "error", "code": e.code, "message": str(e)}
        elif cmd == "stop":
            return 0
        else:
            reply = {"ok": False, "error": f"unknown command {cmd!r}"}
        out.write(json.dumps(reply, ensure_ascii=False) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
