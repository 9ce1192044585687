#!/usr/bin/env bash
# Make sure some binaries are on this machine, installing the Debian package that carries them.
# Usage: scripts/apt-install.sh PACKAGE 'HINT' BINARY...
#   BINARY may list alternatives as 'a|b' (either one will do).
#   HINT: what else the user may do, printed after the install command when it cannot run.
# Installs PACKAGE when running as root with apt-get (waiting for dpkg's lock: several installs
# may run at once on a shared machine), without letting it start a system-wide server;
# otherwise prints the exact command to run and fails.
set -euo pipefail
package=$1 hint=$2
shift 2

present() {
  local wanted alternative
  for wanted in "$@"; do
    local found=""
    IFS='|' read -r -a alternatives <<<"$wanted"
    for alternative in "${alternatives[@]}"; do
      command -v "$alternative" >/dev/null 2>&1 && found=1
    done
    [ -n "$found" ] || return 1
  done
}

present "$@" && exit 0
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "obsgen: installing Debian's $package package ($*)..." >&2
  export DEBIAN_FRONTEND=noninteractive
  apt_get=(apt-get -o DPkg::Lock::Timeout=300)
  "${apt_get[@]}" update -qq || echo "obsgen: apt-get update failed" >&2
  # policy-rc.d keeps the package from starting a system-wide server (:9090, :9093, :8428).
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  "${apt_get[@]}" install -y -qq --no-install-recommends "$package" >/dev/null \
    || echo "obsgen: apt-get install $package failed" >&2
  present "$@" && exit 0
fi
cat >&2 <<MSG
obsgen: $* required but not installed. Run:

    sudo apt-get update && sudo apt-get install -y $package

$hint
MSG
exit 1
