#!/usr/bin/env bash
# Runs every test of the solution (unit, simulator, and, as root, the emulated-testbed end-to-end tests).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
dotnet test Camdoop.sln -c Release -nologo --logger "console;verbosity=normal" "$@"
