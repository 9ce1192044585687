#!/usr/bin/env bash
# Make sure promtool and the Prometheus server are on this machine (Debian's `prometheus`).
exec "$(dirname "$0")/apt-install.sh" prometheus \
  '(or set PROMTOOL=/path/to/promtool and put `prometheus` on PATH), then retry.' \
  promtool prometheus
