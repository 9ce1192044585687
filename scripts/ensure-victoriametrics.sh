#!/usr/bin/env bash
# Make sure the VictoriaMetrics single-node server and vmalert are on this machine.
# Installs Debian's `victoria-metrics` package (it carries victoria-metrics, vmalert, vmagent,
# vmctl, …) when running as root; otherwise prints the exact command to run and fails.
set -euo pipefail
if command -v victoria-metrics >/dev/null 2>&1 && command -v vmalert >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "obsgen: installing Debian's victoria-metrics package (server + vmalert)..." >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=300 update -qq
  # policy-rc.d keeps the package from starting a system-wide server on :8428.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends \
    victoria-metrics >/dev/null
  command -v victoria-metrics >/dev/null && command -v vmalert >/dev/null && exit 0
fi
cat >&2 <<'MSG'
obsgen: victoria-metrics and vmalert are required but not installed. Run:

    sudo apt-get update && sudo apt-get install -y victoria-metrics

(Debian 12 and later ship both binaries in that package), then retry.
MSG
exit 1
