"""``python import_probe.py MODULE ...``, run inside one of the test environments by
tools/ecosystem.py: imports each module and prints one JSON line per module, ``ok`` or the
root exception's first line and the library line that raised it (tools/ecosystem/
failure.py)."""
import importlib
import json
import sys
import time

from failure import first_line, library_frame, root_cause

for name in sys.argv[1:]:
    start = time.perf_counter()
    try:
        importlib.import_module(name)
        record = {"module": name, "ok": True}
    except BaseException as exc:            # noqa: BLE001 - every failure is the finding
        cause = root_cause(exc)
        record = {"module": name, "ok": False, "failure": first_line(cause),
                  "where": library_frame(cause)}
    record["seconds"] = round(time.perf_counter() - start, 2)
    print(json.dumps(record), flush=True)
