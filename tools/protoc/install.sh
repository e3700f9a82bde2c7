#!/usr/bin/env bash
# install.sh makes sure protoc (the Protocol Buffers compiler) is on PATH for
# `make generate` and the generator's golden tests (cmd/protoc-gen-fraktor-grain).
# It is idempotent: when protoc is installed, nothing is done. Otherwise it
# installs the Debian/Ubuntu package `protobuf-compiler` with apt-get, as root
# or through passwordless sudo; where it cannot, it says so and fails.
set -euo pipefail

if command -v protoc >/dev/null 2>&1; then
	echo "protoc: $(command -v protoc) already present ($(protoc --version))"
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
if ! $sudo apt-get install -y --no-install-recommends protobuf-compiler; then
	$sudo apt-get update
	$sudo apt-get install -y --no-install-recommends protobuf-compiler
fi
command -v protoc
