#!/usr/bin/env bash
# Make sure promtool and the Prometheus server are on this machine.
# Installs Debian's `prometheus` package (it carries both) when running as root;
# otherwise prints the exact command to run and fails.
set -euo pipefail
if command -v promtool >/dev/null 2>&1 && command -v prometheus >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "obsgen: installing Debian's prometheus package (promtool + server)..." >&2
  export DEBIAN_FRONTEND=noninteractive
  # Several installs may run at once on a shared machine: wait for dpkg's lock, not fail.
  apt-get -o DPkg::Lock::Timeout=300 update -qq
  # policy-rc.d keeps the package from starting a system-wide server on :9090.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends prometheus >/dev/null
  command -v promtool >/dev/null && command -v prometheus >/dev/null && exit 0
fi
cat >&2 <<'MSG'
obsgen: promtool and prometheus are required but not installed. Run:

    sudo apt-get update && sudo apt-get install -y prometheus

(or set PROMTOOL=/path/to/promtool and put `prometheus` on PATH), then retry.
MSG
exit 1
