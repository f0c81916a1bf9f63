#!/usr/bin/env bash
# Runs every test of the solution (unit, simulator, and, as root, the emulated-testbed end-to-end tests), then the
# merge tests a second time with AVX-512 off, so that both paths of StreamMerger's hot loop are tested.
#
# Usage: ./test.sh [dotnet test arguments...], e.g. ./test.sh --filter FullyQualifiedName~Merge
#
# It builds the solution (Release), then runs the test projects without building again, in two streams side by side:
# the CLI tests (whose testbed tests mostly wait on their emulated cubes) in one, the other projects one after another
# in the other, the simulator tests at a lower CPU priority (nice 10) so that the testbeds keep the CPU they need.
# Extra arguments go to every project's run: dotnet test <project> -c Release --no-build ... "$@".
# The second pass runs the merge tests (namespace Camdoop.MapReduce.Tests.Merge) of tests/Camdoop.MapReduce.Tests
# again, without building (it reuses the same Release build), with DOTNET_EnableAVX512=0 in the environment:
# the runtime then reports no AVX-512 and the merger takes its scalar path (.NET 10 reads DOTNET_EnableAVX512; the
# older DOTNET_EnableAVX512F, set too, no longer has any effect alone). StreamMergerPathTests fails when the
# switch did not take effect. The second pass always runs: with a --filter among the arguments it runs the merge
# tests that the filter also selects (possibly none, which dotnet test reports); no other extra argument applies to
# it. The exit status is the main run's, or the second pass's when the main run passed.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

# Installs a Debian package as root; on failure sets install_error to why (the last line apt-get printed).
install_error=""
install_package() {
    install_error=""
    if ! command -v apt-get >/dev/null; then
        install_error="$1 is missing and there is no apt-get to install it"
        return 1
    fi
    local apt_log reason
    apt_log="$(mktemp)"
    if ! (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1") >"$apt_log" 2>&1; then
        reason="$(grep -v '^[[:space:]]*$' "$apt_log" | tail -n 1 || true)"
        install_error="$1 could not be installed (${reason:-apt-get failed without a message})"
    fi
    rm -f "$apt_log"
    [ -z "$install_error" ]
}

# The testbed and the raw-Ethernet tests build their networks with iproute2's `ip` and `tc`. As root, install it
# when missing; if that fails, go on: those tests then fail and name the missing command.
if [ "$(id -u)" = 0 ] && ! { command -v ip && command -v tc; } >/dev/null; then
    install_package iproute2 || echo "test.sh: $install_error; the testbed tests will fail" >&2
fi

# The pcap link driver needs libpcap (Debian's libpcap0.8). As root, install it when missing; if that fails, go on:
# the pcap tests then skip with the reason, and the end of the output says how many did.
pcap_problem=""
if [ "$(id -u)" = 0 ] && ! ldconfig -p 2>/dev/null | grep 'libpcap\.so\.0\.8' >/dev/null; then
    if ! install_package libpcap0.8; then
        pcap_problem="$install_error"
        echo "test.sh: $pcap_problem; the pcap link tests will be skipped" >&2
    fi
fi

# The streaming job tests run the repository's Python WordCount (examples/streaming). As root, install python3 when
# missing; if that fails, go on: those tests then fail, naming the interpreter their #! line could not find.
if [ "$(id -u)" = 0 ] && ! command -v python3 >/dev/null; then
    install_package python3 || echo "test.sh: $install_error; the streaming job tests will fail" >&2
fi

# The web view's browser test drives Debian's Chromium headless. As root, install it when missing; if that fails, go
# on: the test then fails and names what is missing (without root it skips, as every testbed test does).
if [ "$(id -u)" = 0 ] && [ ! -x /usr/bin/chromium ]; then
    install_package chromium || echo "test.sh: $install_error; the web view test will fail" >&2
fi

# In one `dotnet test Camdoop.sln` that also builds, MSBuild runs each project's tests on the node (one per core) that
# built it: the CLI tests, the longest, could wait for the simulator tests. Both at full tilt at once, though, starve
# the testbeds' node processes past their timeouts. Hence: build, then the two streams, the simulator tests niced so
# that they take only the CPU the testbeds leave.
dotnet build Camdoop.sln -c Release -nologo -v q
run_tests=(dotnet test -c Release --no-build -nologo --logger "console;verbosity=normal")
# Both streams write to the terminal as they go, and to one log (the pcap skips are counted in it).
main_log="$(mktemp)"
# In a subshell, so that `wait` gets dotnet's status (pipefail), not tee's.
("${run_tests[@]}" tests/Camdoop.Cli.Tests "$@" 2>&1 | tee -a "$main_log") &
cli_tests=$!
others=0
for project in tests/*/*.Tests.csproj; do
    case "$project" in
        */Camdoop.Cli.Tests.csproj | */Camdoop.Simulator.Tests.csproj) ;;
        *) "${run_tests[@]}" "$project" "$@" 2>&1 | tee -a "$main_log" || others=1 ;;
    esac
done
nice -n 10 "${run_tests[@]}" tests/Camdoop.Simulator.Tests "$@" 2>&1 | tee -a "$main_log" || others=1
status=0
wait "$cli_tests" || status=$?
if [ "$status" = 0 ]; then
    status=$others
fi
pcap_skipped="$(grep -cE '^\[xUnit\.net [0-9:.]+\][[:space:]]+libpcap not found' "$main_log" || true)"
# The two streams interleave, so a failure scrolls far up; name the failed tests again at the end, with the first
# lines of each one's message, where a reader of only the log's tail sees them.
failed_tests="$(grep -E '^[[:space:]]+Failed [A-Za-z]' "$main_log" || true)"
if [ -n "$failed_tests" ]; then
    echo
    echo "test.sh: these tests failed:"
    echo "$failed_tests"
    grep -E -A 6 '^[[:space:]]+Failed [A-Za-z]' "$main_log" | grep -E -A 3 'Error Message:' | head -n 60 || true
fi
rm -f "$main_log"

# The AVX-512-off pass, with the caller's filter (if any) narrowed to the merge tests.
merge_filter="FullyQualifiedName~Camdoop.MapReduce.Tests.Merge."
user_filter=""
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
    case "${args[i]}" in
        --filter) user_filter="${args[i + 1]:-}" ;;
        --filter=*) user_filter="${args[i]#--filter=}" ;;
    esac
done
filter="$merge_filter"
if [ -n "$user_filter" ]; then
    filter="($user_filter)&($merge_filter)"
fi
echo
echo "test.sh: the merge tests again with AVX-512 off (DOTNET_EnableAVX512=0): StreamMerger's scalar path"
if [ -r /proc/cpuinfo ] && ! grep -qw avx512f /proc/cpuinfo; then
    echo "test.sh: this machine has no AVX-512: both passes ran the scalar path, and the vector path is untested here"
fi
second=0
DOTNET_EnableAVX512=0 DOTNET_EnableAVX512F=0 dotnet test tests/Camdoop.MapReduce.Tests -c Release --no-build -nologo --filter "$filter" ||
    second=$?
if [ "$status" = 0 ]; then
    status=$second
fi

if [ -n "$pcap_problem" ]; then
    echo
    if [ "$pcap_skipped" = 1 ]; then
        echo "test.sh: $pcap_problem; the 1 pcap test was skipped"
    else
        echo "test.sh: $pcap_problem; the $pcap_skipped pcap tests were skipped"
    fi
fi
exit "$status"
