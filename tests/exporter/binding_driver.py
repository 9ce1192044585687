"""Run the real exporter (PynvmlBackend, HTTP) over the fake through whichever nvidia-ml-py
``import pynvml`` finds first, and print one scrape to stdout.

Run by test_exporter_bindings.py in a subprocess whose ``PYTHONPATH`` starts with an unpacked
older wheel. Scenario: the 8-GPU fake, then Xid 79 on GPU 1, which is lost before the event is
read (issue 14, case 2). Exits non-zero (with a message) when the exporter never gets there.
"""

from __future__ import annotations

import sys
import time
import urllib.request

from nvml_exporter.fake import default_fake, fake_binding
from nvml_exporter.nvml import PynvmlBackend
from nvml_exporter.server import Exporter


def main() -> int:
    fake = default_fake()
    with fake_binding(fake):
        exporter = Exporter(PynvmlBackend(), host="127.0.0.1", port=0, init_backoff=(0.01, 0.05))
        exporter.start()
        try:
            url = f"http://127.0.0.1:{exporter.port}/metrics"
            deadline = time.monotonic() + 30
            while not (exporter.ready and fake.xid_registered(1)):
                if time.monotonic() > deadline:
                    print("exporter never became ready with Xid events on GPU 1", file=sys.stderr)
                    return 1
                time.sleep(0.01)
            fake.emit_xid(1, 79, lose_gpu=True)
            while True:
                with urllib.request.urlopen(url, timeout=10) as response:
                    body = response.read().decode()
                if 'xid="79"' in body or time.monotonic() > deadline:
                    break
                time.sleep(0.02)
            sys.stdout.write(body)
        finally:
            exporter.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
