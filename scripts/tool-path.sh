#!/usr/bin/env bash
# Print the path of COMMAND of pinned tool NAME (scripts/go-tools.tsv), as built by
# scripts/ensure-go-tools.sh. Usage: scripts/tool-path.sh NAME [COMMAND]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tools_dir=${OBSGEN_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/obsgen/tools}
row=$(awk -F'\t' -v n="$1" '$1 == n' "$here/go-tools.tsv")
[[ -n "$row" ]] || { echo "obsgen: no tool named $1 in scripts/go-tools.tsv" >&2; exit 2; }
version=$(cut -f3 <<<"$row")
first=$(cut -f5 <<<"$row" | cut -d, -f1)
echo "$tools_dir/$1-$version/${2:-${first##*/}}"
