#!/usr/bin/env bash
# Installs the independent clients the end-to-end tests use (Node.js and Prometheus from
# Debian, packages from the npm registry into tests/e2e/node/node_modules, which git ignores).
# Quiet when done.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
# prometheus and promtool: the observability tests run the deployment's Prometheus config.
command -v promtool >/dev/null || missing+=(prometheus)
# python3: the soak test's clients (bench/soak.py, standard library only).
command -v python3 >/dev/null || missing+=(python3)
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

clients=tests/e2e/node
stamp=$clients/node_modules/.installed-package.json
if [ ! -f "$stamp" ] || ! cmp -s "$clients/package.json" "$stamp"; then
  echo "setup: installing test clients in $clients" >&2
  (cd "$clients" && npm install --silent --no-audit --no-fund >/dev/null)
  cp "$clients/package.json" "$stamp"
fi
