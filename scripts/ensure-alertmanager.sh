#!/usr/bin/env bash
# Make sure amtool and the Alertmanager server are on this machine.
# Installs Debian's `prometheus-alertmanager` package (it carries both) when running as root;
# otherwise prints the exact command to run and fails.
set -euo pipefail
if command -v amtool >/dev/null 2>&1 && { command -v prometheus-alertmanager >/dev/null 2>&1 \
    || command -v alertmanager >/dev/null 2>&1; }; then
  exit 0
fi
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "obsgen: installing Debian's prometheus-alertmanager package (amtool + server)..." >&2
  export DEBIAN_FRONTEND=noninteractive
  # Several installs may run at once on a shared machine: wait for dpkg's lock, not fail.
  apt_get=(apt-get -o DPkg::Lock::Timeout=300)
  "${apt_get[@]}" update -qq
  # policy-rc.d keeps the package from starting a system-wide Alertmanager on :9093.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  "${apt_get[@]}" install -y -qq --no-install-recommends prometheus-alertmanager >/dev/null
  command -v amtool >/dev/null && exit 0
fi
cat >&2 <<'MSG'
obsgen: amtool and the Alertmanager server are required but not installed. Run:

    sudo apt-get update && sudo apt-get install -y prometheus-alertmanager

(or set AMTOOL=/path/to/amtool and put `alertmanager` on PATH), then retry.
MSG
exit 1
