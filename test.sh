#!/usr/bin/env bash
# Runs every test of the solution (unit, simulator, and, as root, the emulated-testbed end-to-end tests).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

# The pcap link driver needs libpcap (Debian's libpcap0.8). As root, install it when missing; if that fails, go on:
# the pcap tests then skip with the reason.
if [ "$(id -u)" = 0 ] && ! ldconfig -p 2>/dev/null | grep 'libpcap\.so\.0\.8' >/dev/null && command -v apt-get >/dev/null; then
    if ! (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libpcap0.8) >/dev/null 2>&1; then
        echo "test.sh: could not install libpcap0.8; the pcap link tests will be skipped" >&2
    fi
fi

dotnet test Camdoop.sln -c Release -nologo --logger "console;verbosity=normal" "$@"
