#!/usr/bin/env bash
# Make sure amtool and the Alertmanager server are on this machine
# (Debian's `prometheus-alertmanager`; its server binary is `prometheus-alertmanager`).
exec "$(dirname "$0")/apt-install.sh" prometheus-alertmanager \
  '(or set AMTOOL=/path/to/amtool and put `alertmanager` on PATH), then retry.' \
  amtool 'prometheus-alertmanager|alertmanager'
