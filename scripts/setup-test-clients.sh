#!/usr/bin/env bash
# Installs the independent clients the end-to-end tests use (Node.js from Debian, packages
# from the npm registry into tests/e2e/node/node_modules, which git ignores). Quiet when done.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "setup: installing nodejs and npm" >&2
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi

clients=tests/e2e/node
stamp=$clients/node_modules/.installed-package.json
if [ ! -f "$stamp" ] || ! cmp -s "$clients/package.json" "$stamp"; then
  echo "setup: installing test clients in $clients" >&2
  (cd "$clients" && npm install --silent --no-audit --no-fund >/dev/null)
  cp "$clients/package.json" "$stamp"
fi
