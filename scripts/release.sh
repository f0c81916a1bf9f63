#!/usr/bin/env bash
# Builds one release archive per runtime identifier, artifacts/release/camdoop-VERSION-RID.tar.gz: the camdoop command
# published self-contained (no .NET needed on the server), the systemd unit, an example node config and INSTALL.md.
# Usage: scripts/release.sh [RID...]   (default: linux-x64 linux-arm64)
# CAMDOOP_RELEASE_DIR puts the archives elsewhere; CAMDOOP_RELEASE_SELF_CONTAINED=false publishes framework-dependent
# builds (they need the .NET and ASP.NET Core runtimes on the server), which the tests use because they are faster.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
project="$here/tools/Camdoop.Cli/Camdoop.Cli.csproj"
out="${CAMDOOP_RELEASE_DIR:-$here/artifacts/release}"
self_contained="${CAMDOOP_RELEASE_SELF_CONTAINED:-true}"
rids=("$@")
if [ ${#rids[@]} -eq 0 ]; then
  rids=(linux-x64 linux-arm64)
fi
version="$(dotnet msbuild "$project" -getProperty:Version -nologo)"
if [ -z "$version" ]; then
  echo "release: no <Version> in Directory.Build.props" >&2
  exit 1
fi
mkdir -p "$out"
for rid in "${rids[@]}"; do
  name="camdoop-$version-$rid"
  stage="$(mktemp -d)"
  trap 'rm -rf "$stage"' EXIT
  root="$stage/$name"
  mkdir -p "$root/deploy"
  echo "release: publishing $name (self-contained: $self_contained)..." >&2
  if ! dotnet publish "$project" -c Release -r "$rid" --self-contained "$self_contained" -o "$root" -nologo -v quiet \
      > "$stage/publish.log" 2>&1; then
    grep -E "error" "$stage/publish.log" | sort -u >&2 || cat "$stage/publish.log" >&2
    echo "release: publishing for $rid failed" >&2
    exit 1
  fi
  # Debug symbols and API documentation are for developers, not for a server.
  find "$root" -maxdepth 1 -name '*.pdb' -delete
  for doc in "$root"/*.xml; do
    if [ -f "${doc%.xml}.dll" ]; then
      rm "$doc"
    fi
  done
  cp "$here/deploy/camdoop-node.service" "$here/deploy/node.example.json" "$root/deploy/"
  cp "$here/deploy/INSTALL.md" "$root/INSTALL.md"
  tar -C "$stage" -czf "$out/$name.tar.gz" --owner=0 --group=0 "$name"
  rm -rf "$stage"
  trap - EXIT
  echo "$out/$name.tar.gz"
done
