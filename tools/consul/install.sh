#!/usr/bin/env bash
# install.sh builds a Consul agent binary from source for the integration tests
# (see docs/membership.md). It is idempotent: when the output already exists and
# runs, nothing is done.
#
# Usage: bash tools/consul/install.sh [OUTPUT]   (default: <repo root>/bin/consul)
#
# The agent is built from the wrapper module next to this script, which pins
# github.com/hashicorp/consul v1.14.11 (newer releases do not build from the
# module proxy alone: the submodule versions they need are not published).
# A cold build takes about six minutes on two cores; the Go build and module
# caches make later builds fast.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(git -C "$here" rev-parse --show-toplevel 2>/dev/null || (cd "$here/../.." && pwd))"
out="${1:-$root/bin/consul}"
case "$out" in
	/*) ;;
	*) out="$PWD/$out" ;;
esac

if [ -x "$out" ] && "$out" version >/dev/null 2>&1; then
	echo "consul: $out already present ($("$out" version | head -n1))"
	exit 0
fi

version="v1.14.11"
mkdir -p "$(dirname "$out")"
cd "$here"

# Consul's own go.mod uses replace directives for its api/sdk/proto-public
# submodules; from the proxy they resolve to the published versions. The
# checksum database does not know every one of them, so the consul module
# itself is exempted from it; go.sum pins everything else.
export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"

if ! GOFLAGS=-mod=mod go list -m "github.com/hashicorp/consul" >/dev/null 2>&1 || [ ! -s go.sum ]; then
	# Only when go.mod/go.sum are missing or were reset: resolve them afresh.
	export GONOSUMDB="${GONOSUMDB:+$GONOSUMDB,}github.com/hashicorp/consul"
	# Seed go.sum from consul's own go.sum so that its (old) dependency graph
	# verifies without a network round trip per module.
	dir="$(go mod download -json "github.com/hashicorp/consul@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
	if [ -n "$dir" ] && [ -f "$dir/go.sum" ]; then
		cat "$dir/go.sum" >> go.sum
		sort -u -o go.sum go.sum
	fi
	GOFLAGS=-mod=mod go get "github.com/hashicorp/consul@$version"
	GOFLAGS=-mod=mod go mod tidy
fi

tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT
echo "consul: building $version into $out (cold build takes ~6 minutes)"
GOFLAGS=-mod=readonly go build -trimpath -o "$tmp" github.com/hashicorp/consul
mv -f "$tmp" "$out"
trap - EXIT
echo "consul: $("$out" version | head -n1)"
