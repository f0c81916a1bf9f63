#!/usr/bin/env bash
# Packs the job API (sdk/Camdoop.Jobs) into artifacts/packages, the local NuGet source that projects made with
# `dotnet new camdoop-job` (templates/camdoop-job) restore Camdoop.Jobs from.
# Usage: scripts/pack-sdk.sh [dotnet pack arguments...]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dotnet pack "$here/sdk/Camdoop.Jobs/Camdoop.Jobs.csproj" -c Release -nologo -v q -o "$here/artifacts/packages" "$@"
ls "$here"/artifacts/packages/Camdoop.Jobs.*.nupkg
