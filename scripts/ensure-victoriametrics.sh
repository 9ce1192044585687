#!/usr/bin/env bash
# Make sure the VictoriaMetrics single-node server and vmalert are on this machine (Debian's
# `victoria-metrics` package carries victoria-metrics, vmalert, vmagent, vmctl, …).
exec "$(dirname "$0")/apt-install.sh" victoria-metrics \
  '(Debian 12 and later ship both binaries in that package), then retry.' \
  victoria-metrics vmalert
