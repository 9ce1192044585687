#!/usr/bin/env bash
# Build the pinned tools of scripts/go-tools.tsv (Prometheus 3 and 2.53, Alertmanager, VictoriaMetrics,
# Sloth, pint) into a cache outside the repository, once; later runs only check the cache.
# Usage: scripts/ensure-go-tools.sh [NAME...]   (default: every tool in the table)
#
# `go install module/cmd/x@version` refuses modules whose go.mod has replace or exclude directives
# (Prometheus's has), so each module is fetched with `go mod download -json module@version`, copied
# out of the read-only module cache and its commands built inside that copy.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
table=$here/go-tools.tsv
tools_dir=${OBSGEN_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/obsgen/tools}

if ! command -v go >/dev/null 2>&1; then
  cat >&2 <<MSG
obsgen: Go is required to build the test tools (Prometheus 3 and 2.53, Alertmanager, VictoriaMetrics,
Sloth, pint) and was not found on PATH. Install Go 1.26 or later (Debian: apt-get install golang-go,
if recent enough), or point OBSGEN_TOOLS_DIR at a folder where they are already built.
\`make render\` does not need Go; only \`make test\` and \`make bench\` do.
MSG
  exit 1
fi

wanted=("$@")
built=0
while IFS=$'\t' read -r name module version release commands tags stamp_var placeholders; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  if ((${#wanted[@]})) && [[ ! " ${wanted[*]} " == *" $name "* ]]; then continue; fi
  dest=$tools_dir/$name-$version
  stamp=$dest/.built
  [[ -f "$stamp" ]] && continue
  echo "obsgen: building $name $release ($module@$version) into $dest (first time only)..." >&2
  start=$(date +%s)
  json=$(go mod download -json "$module@$version")
  src=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' <<<"$json")
  if [[ -z "$src" || ! -d "$src" ]]; then
    echo "obsgen: go mod download $module@$version failed:" >&2
    echo "$json" >&2
    exit 1
  fi
  work=$(mktemp -d "${TMPDIR:-/tmp}/obsgen-go-$name.XXXXXX")
  trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
  cp -r "$src/." "$work/"
  chmod -R u+w "$work"
  # A web UI that upstream builds with npm and embeds: an empty page stands in (the tests use the
  # APIs, never the UI).
  if [[ "$placeholders" != "-" ]]; then
    IFS=',' read -r -a folders <<<"$placeholders"
    for folder in "${folders[@]}"; do
      mkdir -p "$work/$folder"
      printf '<!doctype html><title>UI not built</title>\n' >"$work/$folder/index.html"
    done
  fi
  mkdir -p "$dest"
  tagflag=()
  [[ "$tags" != "-" ]] && tagflag=(-tags "$tags")
  IFS=',' read -r -a pkgs <<<"$commands"
  for pkg in "${pkgs[@]}"; do
    (cd "$work" && GOWORK=off GOFLAGS=-mod=mod go build -trimpath "${tagflag[@]}" \
      -ldflags "-X $stamp_var" -o "$dest/" "./$pkg")
  done
  chmod -R u+w "$work"
  rm -rf "$work"
  trap - EXIT
  printf '%s %s %s\n' "$module" "$version" "$(( $(date +%s) - start ))s" >"$stamp"
  echo "obsgen: built $name $release in $(( $(date +%s) - start )) s" >&2
  built=1
done <"$table"
((built)) && echo "obsgen: tools in $tools_dir" >&2
exit 0
