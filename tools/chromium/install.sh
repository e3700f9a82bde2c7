#!/usr/bin/env bash
# install.sh makes sure a Chromium browser is on PATH for the dashboard's
# browser test (cluster/dashboard, TestDashboardInBrowser). It is idempotent:
# when Chromium or Chrome is already installed, nothing is done. Otherwise it
# installs the Debian/Ubuntu package `chromium` with apt-get, as root or
# through passwordless sudo. Where it cannot, it says so and succeeds: the
# browser test then skips with a message naming the missing browser; with
# FRAKTOR_REQUIRE_CHROMIUM=1 (CI) it fails instead, and so does the test.
set -euo pipefail

missing() {
	echo "chromium: $1" >&2
	if [ "${FRAKTOR_REQUIRE_CHROMIUM:-}" = 1 ]; then exit 1; fi
	exit 0
}

for name in chromium chromium-browser google-chrome google-chrome-stable headless-shell; do
	if command -v "$name" >/dev/null 2>&1; then
		echo "chromium: $(command -v "$name") already present"
		exit 0
	fi
done

if ! command -v apt-get >/dev/null 2>&1; then
	missing "not installed and no apt-get here; install Chromium to run the dashboard's browser test"
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
	if sudo -n true 2>/dev/null; then
		sudo="sudo -n"
	else
		missing "not installed and not root (no passwordless sudo); run: sudo apt-get install chromium"
	fi
fi
export DEBIAN_FRONTEND=noninteractive
if ! $sudo apt-get install -y --no-install-recommends chromium; then
	$sudo apt-get update
	$sudo apt-get install -y --no-install-recommends chromium
fi
command -v chromium
