#!/usr/bin/env bash
# install.sh makes sure protoc (the Protocol Buffers compiler) is on PATH for
# `make generate` and the generator's golden tests (cmd/protoc-gen-fraktor-grain).
# It is idempotent: when protoc and the well-known types' .proto files
# (google/protobuf/*.proto, which the .proto files here import) are
# installed, nothing is done. Otherwise it installs the Debian/Ubuntu
# packages `protobuf-compiler` and `libprotobuf-dev` (the well-known types;
# only recommended by protobuf-compiler, so --no-install-recommends alone
# leaves them out) with apt-get, as root or through passwordless sudo; where
# it cannot, it says so and fails.
set -euo pipefail

wkt=/usr/include/google/protobuf/empty.proto
if command -v protoc >/dev/null 2>&1 && [ -f "$wkt" ]; then
	echo "protoc: $(command -v protoc) already present ($(protoc --version)), well-known types in /usr/include"
	exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "protoc: not installed and no apt-get here; install protobuf-compiler" >&2
	exit 1
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
	if sudo -n true 2>/dev/null; then
		sudo="sudo -n"
	else
		echo "protoc: not installed and not root (no passwordless sudo); run: sudo apt-get install protobuf-compiler" >&2
		exit 1
	fi
fi
export DEBIAN_FRONTEND=noninteractive
if ! $sudo apt-get install -y --no-install-recommends protobuf-compiler libprotobuf-dev; then
	$sudo apt-get update
	$sudo apt-get install -y --no-install-recommends protobuf-compiler libprotobuf-dev
fi
if [ ! -f "$wkt" ]; then
	echo "protoc: installed, but $wkt is missing (the well-known types)" >&2
	exit 1
fi
command -v protoc
