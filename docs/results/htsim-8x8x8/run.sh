#!/usr/bin/env bash
# Build htsim (with htsim-camcube-incast.patch) and run one pair on the 8x8x8 incast:
#   htsim, then the Camdoop simulator with --threads 1, then with its default threads.
# Prints a CSV header and one line per run. Downloads nothing.
#
# usage: run.sh HTSIM_SRC_DIR CAMDOOP_CLI [RUN_ID] [WORK_DIR]
#   HTSIM_SRC_DIR  a checkout of github.com/Broadcom/csg-htsim (commit 841d9e7be46b...), containing sim/
#   CAMDOOP_CLI    path to the camdoop command-line tool
# Needs: g++, make, patch, /usr/bin/time (GNU), jq, awk.
set -euo pipefail

SRC=${1:?htsim source dir}
CLI=${2:?camdoop cli path}
RUN=${3:-1}
WORK=${4:-${TMPDIR:-/tmp}/htsim-camcube-work}
HERE=$(cd "$(dirname "$0")" && pwd)
PATCH="$HERE/htsim-camcube-incast.patch"
BIN="$WORK/sim/datacenter/htsim_ndp_camcube_incast"
LOGS="$WORK/logs"
mkdir -p "$WORK" "$LOGS"

# --- build (once per WORK dir) ---
if [ ! -x "$BIN" ]; then
    rm -rf "$WORK/sim"
    cp -a "$SRC/sim" "$WORK/sim"
    (cd "$WORK" && patch -p1 < "$PATCH") >&2
    make -C "$WORK/sim" -j2 libhtsim.a >"$LOGS/build-lib.log" 2>&1
    make -C "$WORK/sim/datacenter" htsim_ndp_camcube_incast >"$LOGS/build-driver.log" 2>&1
fi

FLOW_BYTES=2097152   # the simulator's --input-per-server 2MB is 2 MiB per server
SENDERS=511
# receiver's 6 links at 1 Gbit/s
lb() { awk -v b="$1" 'BEGIN{printf "%.6f", b*8/6e9}'; }
tv() { # field from /usr/bin/time -v output
    case "$2" in
        user) awk -F': ' '/User time/{print $2}' "$1" ;;
        sys)  awk -F': ' '/System time/{print $2}' "$1" ;;
        rss)  awk -F': ' '/Maximum resident set size/{print $2}' "$1" ;;
        wall) awk -F': ' '/Elapsed \(wall clock\)/{n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$1" ;;
    esac
}

echo "simulator,run,threads,sim_time_s,lower_bound_s,sim_time_over_lb,cpu_user_s,cpu_sys_s,cpu_s,wall_s,max_rss_kb,delivered_bytes,cpu_s_per_delivered_gb,packet_hops,data_packet_hops,ctrl_packet_hops,packet_hops_per_cpu_s,events,events_per_cpu_s,sim_cpu_s,non_sim_cpu_s,map_wall_s,events_per_sim_cpu_s,packet_hops_per_sim_cpu_s,data_pkts_sent,retx_pkts,retx_bytes"

row() { # simulator run threads simtime delivered hops datahops ctrlhops events simcpu mapwall datasent retxp retxb timefile
    local T=${15}
    local u s r w
    u=$(tv "$T" user); s=$(tv "$T" sys); r=$(tv "$T" rss); w=$(tv "$T" wall)
    awk -v n="$1" -v run="$2" -v th="$3" -v st="$4" -v del="$5" -v hp="$6" -v dh="$7" -v ch="$8" -v ev="$9" \
        -v sc="${10}" -v mw="${11}" -v ds="${12}" -v rp="${13}" -v rb="${14}" -v u="$u" -v s="$s" -v r="$r" -v w="$w" 'BEGIN{
        cpu=u+s; lb=del*8/6e9;
        printf "%s,%s,%s,%.6f,%.6f,%.4f,%.2f,%.2f,%.2f,%.2f,%d,%d,%.3f,%d,%d,%d,%.0f,%d,%.0f,%.3f,%.2f,%s,%.0f,%.0f,%s,%s,%s\n",
            n,run,th,st,lb,st/lb,u,s,cpu,w,r,del,cpu/(del/1e9),hp,dh,ch,hp/cpu,ev,ev/cpu,sc,cpu-sc,mw,ev/sc,hp/sc,ds,rp,rb }'
}

# --- htsim ---
H="$LOGS/htsim-$RUN"
/usr/bin/time -v "$BIN" -k 8 -mtu 9000 -bytes $FLOW_BYTES -dst 0 >"$H.out" 2>"$H.time"
res() { grep '^RESULT' "$H.out" | tr ' ' '\n' | awk -F= -v k="$1" '$1==k{print $2}'; }
DEL=$((SENDERS * FLOW_BYTES))
HF=$(res hops_data_full); HT=$(res hops_data_trimmed); HC=$(res hops_ctrl); HO=$(res hops_other)
NEW=$(res data_pkts_new); RTX=$(res data_pkts_rtx)
row htsim "$RUN" 1 "$(res last_flow_done_s)" "$DEL" $((HF + HT + HC + HO)) $((HF + HT)) $((HC + HO)) \
    "$(res events)" "$(res sim_cpu_s)" NA $((NEW + RTX)) "$RTX" $((RTX * 9000)) "$H.time"

# --- Camdoop simulator ---
for TH in 1 default; do
    C="$LOGS/camdoop-$RUN-t$TH"
    ARGS=(sim run --torus 8x8x8 --job synthetic --output-ratio 1 --reducers 1 --mode noagg --input-per-server 2MB --seed 3 --json)
    [ "$TH" = 1 ] && ARGS+=(--threads 1)
    /usr/bin/time -v "$CLI" "${ARGS[@]}" >"$C.json" 2>"$C.time"
    j() { jq -r "$1" "$C.json"; }
    ENC=$(j .intermediateEncodedBytes)
    DELC=$(awk -v e="$ENC" 'BEGIN{printf "%d", e*511/512}')
    row camdoop "$RUN" "$TH" "$(j .shuffleReduceSeconds)" "$DELC" "$(j .linkFrames)" "$(j .dataFrames)" \
        "$(j '.linkFrames - .dataFrames')" "$(j .events)" "$(j .simulationCpuSeconds)" "$(j .mapWallSeconds)" \
        NA NA "$(j .retransmittedBytes)" "$C.time"
done
