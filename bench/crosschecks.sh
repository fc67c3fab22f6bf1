#!/usr/bin/env bash
# Cross-checks of schedlab's wake-up latency and tracing features against independent
# measurements, each pair run side by side in one invocation (results: bench/crosschecks.md).
#
#   a. Response vs trace: per task, the user-space response (t_start - t_release) against the
#      kernel trace's first switch-in of that task after the release (trace_slices), both
#      CLOCK_MONOTONIC, for OTHER and FIFO, 4 CPU-bound tasks sharing CPU 0.
#   b. Periodic vs cyclictest: one FIFO task at priority 90 waking every 1 ms on CPU 0 for
#      10,000 periods, schedlab's periodic workload against cyclictest with the same
#      priority, interval, CPU and count, without load and with 2 OTHER CPU hogs on CPU 0;
#      each with the CPU-latency PM QoS left alone (cyclictest --laptop) and held at 0 us by
#      this script (what cyclictest does by default).
#   c. --trace overhead: the same cell with and without --trace, alternated 4 times each;
#      median makespan and harness CPU per trial, and wall/CPU time per invocation.
#
# Needs root (RT priority 90, tracefs, /dev/cpu_dma_latency, apt-get). Installs rt-tests
# (cyclictest) and sqlite3 with apt-get if they are missing. Uses a temporary directory
# removed on exit; stops the CPU hogs it starts and releases the PM QoS request it holds.
# Build schedlab first (cargo build --release, as your user), then:
#     sudo bash bench/crosschecks.sh            # about 2 minutes
# Environment: SCHEDLAB=path to the binary (default target/release/schedlab),
# LOOPS=periods for check b (default 10000 = 10 s per measurement).
# Prints Markdown tables on standard output; progress goes to standard error.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SL=${SCHEDLAB:-$ROOT/target/release/schedlab}
LOOPS=${LOOPS:-10000}

die() { echo "crosschecks: $*" >&2; exit 1; }
note() { echo "crosschecks: $*" >&2; }

[[ $EUID -eq 0 ]] || die "needs root (RT priority, tracefs, /dev/cpu_dma_latency): sudo bash $0"
[[ -x $SL ]] || die "no schedlab binary at $SL: run 'cargo build --release' first (or set SCHEDLAB)"

need=()
command -v cyclictest >/dev/null || need+=(rt-tests)
command -v sqlite3 >/dev/null || need+=(sqlite3)
command -v taskset >/dev/null || need+=(util-linux)
if ((${#need[@]})); then
    note "installing ${need[*]} with apt-get"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >&2
fi

TMP=$(mktemp -d /tmp/schedlab-crosschecks.XXXXXX)
HOGS=()
QOS_FD=
cleanup() {
    local p
    for p in "${HOGS[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${HOGS[@]}"; do wait "$p" 2>/dev/null || true; done
    HOGS=()
    if [[ -n $QOS_FD ]]; then exec {QOS_FD}>&-; QOS_FD=; fi
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- helpers ---------------------------------------------------------------------------

# Median of the numbers on standard input (one per line); "n/a" if none.
median() {
    sort -g | awk '{ a[NR] = $1 } END {
        if (NR == 0) { print "n/a"; exit }
        if (NR % 2) m = a[(NR + 1) / 2]; else m = (a[NR / 2] + a[NR / 2 + 1]) / 2
        print m }'
}
# Maximum of the numbers on standard input.
maximum() { sort -g | tail -n 1; }
# ns -> us with one decimal ("n/a" passes through).
us() { awk -v v="$1" 'BEGIN { if (v == "n/a" || v == "") print "n/a"; else printf "%.1f", v / 1000 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print "n/a"; else printf "%.3f", a / b }'; }
q() { sqlite3 -batch -noheader -separator $'\t' "$@"; }

start_hogs() { # $1 = count, all on CPU 0, SCHED_OTHER nice 0
    local i
    for ((i = 0; i < $1; i++)); do
        taskset -c 0 sh -c 'while :; do :; done' &
        HOGS+=($!)
    done
    sleep 0.5
}
stop_hogs() {
    local p
    for p in "${HOGS[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${HOGS[@]}"; do wait "$p" 2>/dev/null || true; done
    HOGS=()
}
qos_hold_zero() { # hold a CPU-latency PM QoS request of 0 us (as cyclictest does by default)
    exec {QOS_FD}>/dev/cpu_dma_latency
    printf '0' >&"$QOS_FD"
}
qos_release() { exec {QOS_FD}>&-; QOS_FD=; }
qos_now() { od -An -td4 /dev/cpu_dma_latency | tr -d ' '; }

echo "# schedlab cross-checks"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "- kernel: $(uname -r); CPU: $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), $(nproc) CPUs"
echo "- cpuidle driver/governor: $(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null || echo none)/$(cat /sys/devices/system/cpu/cpuidle/current_governor_ro 2>/dev/null || cat /sys/devices/system/cpu/cpuidle/current_governor 2>/dev/null || echo none)"
echo "- schedlab: $("$SL" --version 2>/dev/null || echo unknown) ($SL); $(cyclictest --help 2>&1 | head -n 1 | tr -d '\n' || true)"
echo "- load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

# --- a. response vs trace ----------------------------------------------------------------
note "a. response vs trace"
DBA=$TMP/a.db
"$SL" run --trace --policy other,fifo --tasks 4 --cpus 0 --work 20ms --trials 5 \
    --db "$DBA" --quiet >"$TMP/a.log" 2>&1 || { cat "$TMP/a.log" >&2; die "check a: schedlab run failed"; }
# Per task: policy, response_ns, trace release->switch-in ns (the first trace slice starting
# at or after the release, the release floored to the trace's 1 us resolution), whether
# t_start lies inside that slice (1/0), and trace_delay_p50_ns.
q "$DBA" "
WITH k AS (
  SELECT c.policy, k.trial_id, k.task_index, k.t_release_ns AS rel, k.t_start_ns AS st,
         k.response_ns AS resp, k.trace_delay_p50_ns AS d50,
         (SELECT min(s.start_ns) FROM trace_slices s
           WHERE s.trial_id = k.trial_id AND s.task_index = k.task_index
             AND s.start_ns >= (k.t_release_ns / 1000) * 1000) AS first_in
  FROM tasks k JOIN trials t USING (trial_id) JOIN cells c USING (cell_id)
  WHERE k.role = 'task' AND t.status = 'ok' AND t.warmup = 0)
SELECT policy, resp, ifnull(first_in - rel, ''),
       CASE WHEN first_in IS NULL THEN '' ELSE
         (SELECT count(*) FROM trace_slices s WHERE s.trial_id = k.trial_id
            AND s.task_index = k.task_index AND s.start_ns = first_in
            AND k.st >= s.start_ns AND k.st < s.end_ns + 1000) END,
       ifnull(d50, '')
FROM k ORDER BY policy, trial_id, task_index;" >"$TMP/a.tsv"

echo "## a. Response (user space) vs the kernel trace's first switch-in after release"
echo
echo "\`schedlab run --trace --policy other,fifo --tasks 4 --cpus 0 --work 20ms --trials 5\` (barrier start, processes, pinned to CPU 0)."
echo "Per task: response = t_start - t_release (user space); trace = first trace_slices.start_ns at or after t_release, minus t_release."
echo
echo "| policy | tasks | with a trace switch-in | median response | median trace release->switch-in | median abs. difference | median response - trace | min response - trace | max abs. difference | t_start inside that slice | median trace_delay_p50 (all wake-ups of the task) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for pol in $(cut -f1 "$TMP/a.tsv" | sort -u); do
    awk -F'\t' -v p="$pol" '$1 == p' "$TMP/a.tsv" >"$TMP/a.$pol"
    n=$(wc -l <"$TMP/a.$pol")
    nt=$(awk -F'\t' '$3 != ""' "$TMP/a.$pol" | wc -l)
    inside=$(awk -F'\t' '$4 == 1' "$TMP/a.$pol" | wc -l)
    mr=$(cut -f2 "$TMP/a.$pol" | median)
    mt=$(awk -F'\t' '$3 != "" { print $3 }' "$TMP/a.$pol" | median)
    mad=$(awk -F'\t' '$3 != "" { d = $2 - $3; print (d < 0 ? -d : d) }' "$TMP/a.$pol" | median)
    msd=$(awk -F'\t' '$3 != "" { print $2 - $3 }' "$TMP/a.$pol" | median)
    nsd=$(awk -F'\t' '$3 != "" { d = $2 - $3; if (m == "" || d < m) m = d } END { print (m == "" ? "n/a" : m) }' "$TMP/a.$pol")
    xad=$(awk -F'\t' '$3 != "" { d = $2 - $3; print (d < 0 ? -d : d) }' "$TMP/a.$pol" | maximum)
    md50=$(awk -F'\t' '$5 != "" { print $5 }' "$TMP/a.$pol" | median)
    echo "| $pol | $n | $nt | $(us "$mr") us | $(us "$mt") us | $(us "$mad") us | $(us "$msd") us | $(us "$nsd") us | $(us "$xad") us | $inside of $nt | $(us "$md50") us |"
done
echo
echo "Trials: $(q "$DBA" "SELECT count(*) FROM trials WHERE status = 'ok'") ok of $(q "$DBA" "SELECT count(*) FROM trials"); trace events lost: $(q "$DBA" "SELECT ifnull(sum(trace_lost_events), 0) FROM trials"); tasks with unseen switch-ins: $(q "$DBA" "SELECT count(*) FROM tasks WHERE role = 'task' AND trace_unseen_switch_ins > 0"); schedlab warnings (e.g. machine not idle before a trial): $(q "$DBA" "SELECT count(*) FROM warnings")."
echo

# --- b. periodic vs cyclictest -------------------------------------------------------------
note "b. periodic vs cyclictest ($LOOPS periods of 1 ms per measurement, 8 measurements)"
DBB=$TMP/b.db
B_ROWS=$TMP/b.rows
: >"$B_ROWS"
periodic_schedlab() { # $1 = antagonists, $2 = label
    local before after
    before=$(q "$DBB" "SELECT ifnull(max(run_id), 0) FROM runs" 2>/dev/null || echo 0)
    "$SL" run --workload periodic --policy fifo --rt-priority 90 --tasks 1 --cpus 0 \
        --period 1ms --run 1us --work "$((LOOPS))ms" --trials 1 --antagonists "$1" \
        --sample-interval off --db "$DBB" --quiet >"$TMP/b.log" 2>&1 \
        || { cat "$TMP/b.log" >&2; die "check b: schedlab run failed"; }
    after=$(q "$DBB" "SELECT max(run_id) FROM runs")
    [[ $after -gt $before ]] || die "check b: no new run stored"
    q "$DBB" "SELECT k.lat_count, k.lat_min_ns, k.lat_p50_ns, k.lat_p99_ns, k.lat_max_ns, k.policy_in_force, k.rt_priority
              FROM tasks k JOIN trials t USING (trial_id)
              WHERE t.run_id = $after AND k.role = 'task' AND t.status = 'ok'" >"$TMP/b.one"
    [[ -s $TMP/b.one ]] || die "check b: no periodic task row (run $after)"
    IFS=$'\t' read -r cnt mn p50 p99 mx pol prio <"$TMP/b.one"
    printf '%s\tschedlab periodic (%s %s)\t%s\t%s\t%s\t%s\t%s\n' "$2" "$pol" "$prio" "$cnt" \
        "$(us "$mn")" "$(us "$p50")" "$(us "$p99")" "$(us "$mx")" >>"$B_ROWS"
}
periodic_cyclictest() { # $1 = hogs, $2 = label
    local h=$TMP/hist.txt
    rm -f "$h"
    if (($1 > 0)); then start_hogs "$1"; fi
    cyclictest -m -p 90 -i 1000 -l "$LOOPS" -a 0 -t 1 -q --laptop -h 20000 --histfile="$h" \
        >"$TMP/c.log" 2>&1 || { stop_hogs; cat "$TMP/c.log" >&2; die "check b: cyclictest failed"; }
    stop_hogs
    # Histogram lines: "<us> <count>"; percentiles as the smallest bucket reaching the share.
    awk -v label="$2" '
        /^# Total:/ { total = $3 + 0 }
        /^# Min Latencies:/ { mn = $4 + 0 }
        /^# Max Latencies:/ { mx = $4 + 0 }
        /^# Histogram Overflows:/ { of = $4 + 0 }
        /^[0-9]+[ \t]+[0-9]+/ { n++; b[n] = $1 + 0; c[n] = $2 + 0; sum += $2 }
        END {
            t50 = 0.5 * sum; t99 = 0.99 * sum; acc = 0; p50 = ""; p99 = ""
            for (i = 1; i <= n; i++) { acc += c[i]
                if (p50 == "" && acc >= t50) p50 = b[i]
                if (p99 == "" && acc >= t99) p99 = b[i] }
            if (of > 0) { if (p50 == "") p50 = ">20000"; if (p99 == "") p99 = ">20000" }
            printf "%s\tcyclictest --laptop\t%d\t%d\t%s\t%s\t%d\n", label, total, mn, p50, p99, mx
        }' "$h" >>"$B_ROWS"
}
for qos in none zero; do
    if [[ $qos == zero ]]; then qos_hold_zero; fi
    qlabel=$([[ $qos == zero ]] && echo "held at 0 us" || echo "not set")
    note "b. PM QoS $qlabel (reads $(qos_now) us)"
    for load in 0 2; do
        label="$([[ $load == 0 ]] && echo "no load" || echo "2 CPU hogs on CPU 0 (OTHER)")"$'\t'"$qlabel"
        periodic_schedlab "$load" "$label"
        periodic_cyclictest "$load" "$label"
    done
    if [[ $qos == zero ]]; then qos_release; fi
done

echo "## b. Periodic wake-up latency: schedlab periodic vs cyclictest"
echo
echo "One SCHED_FIFO task at priority 90 on CPU 0, absolute 1 ms period, $LOOPS periods."
echo "schedlab: \`schedlab run --workload periodic --policy fifo --rt-priority 90 --tasks 1 --cpus 0 --period 1ms --run 1us --work ${LOOPS}ms --trials 1 --antagonists 0|2 --sample-interval off\` (lat_* columns of the tasks table; HDR histogram, <= 1 % error)."
echo "cyclictest: \`cyclictest -m -p 90 -i 1000 -l $LOOPS -a 0 -t 1 -q --laptop -h 20000 --histfile=F\` (1 us histogram buckets; p50/p99 = smallest bucket reaching the share); hogs: 2 x \`taskset -c 0 sh -c 'while :; do :; done'\`."
echo "CPU-latency PM QoS (/dev/cpu_dma_latency): 'not set' = left alone (cyclictest --laptop); 'held at 0 us' = this script holds a 0 us request for both tools, which is what cyclictest does by default without --laptop."
echo
echo "| load | PM QoS | tool | wake-ups | min | p50 | p99 | max |"
echo "|---|---|---|---|---|---|---|---|"
awk -F'\t' '{ printf "| %s | %s | %s | %s | %s us | %s us | %s us | %s us |\n", $1, $2, $3, $4, $5, $6, $7, $8 }' "$B_ROWS"
echo
echo "schedlab warnings during check b: $(q "$DBB" "SELECT count(*) FROM warnings")."
echo

# --- c. --trace overhead ----------------------------------------------------------------------
note "c. --trace overhead (8 alternating invocations)"
DBC=$TMP/c.db
C_RUNS=$TMP/c.runs
: >"$C_RUNS"
one_c() { # $1 = trace|plain
    local flag=() t0 t1 before after
    [[ $1 == trace ]] && flag=(--trace)
    before=$(q "$DBC" "SELECT ifnull(max(run_id), 0) FROM runs" 2>/dev/null || echo 0)
    exec {TF}>"$TMP/time"
    TIMEFORMAT='%R %U %S'
    { time "$SL" run "${flag[@]}" --policy other --tasks 4 --cpus 0 --work 50ms --trials 7 \
        --db "$DBC" --quiet >"$TMP/c.log" 2>&1; } 2>&"$TF" \
        || { exec {TF}>&-; cat "$TMP/c.log" >&2; die "check c: schedlab run failed"; }
    exec {TF}>&-
    after=$(q "$DBC" "SELECT max(run_id) FROM runs")
    [[ $after -gt $before ]] || die "check c: no new run stored"
    read -r t0 t1 t2 <"$TMP/time"
    printf '%s\t%s\t%s\t%s\n' "$1" "$after" "$t0" "$(awk -v u="$t1" -v s="$t2" 'BEGIN { printf "%.3f", u + s }')" >>"$C_RUNS"
}
# An uncounted warm-up invocation calibrates the work and stores the rate in the database; the
# counted ones reuse it (same work in both modes, no calibration in their wall time).
"$SL" run --policy other --tasks 4 --cpus 0 --work 50ms --trials 1 --db "$DBC" --quiet \
    >"$TMP/c.log" 2>&1 || { cat "$TMP/c.log" >&2; die "check c: warm-up run failed"; }
# Alternating, order ABBA BAAB.
for mode in trace plain plain trace plain trace trace plain; do one_c "$mode"; done
c_trials() { # $1 = mode, $2 = column
    local ids
    ids=$(awk -F'\t' -v m="$1" '$1 == m { printf "%s%s", sep, $2; sep = "," }' "$C_RUNS")
    q "$DBC" "SELECT $2 FROM trials WHERE run_id IN ($ids) AND status = 'ok' AND warmup = 0 AND $2 IS NOT NULL"
}
mk_p=$(c_trials plain makespan_ns | median); mk_t=$(c_trials trace makespan_ns | median)
hc_p=$(c_trials plain harness_cpu_ns | median); hc_t=$(c_trials trace harness_cpu_ns | median)
n_p=$(c_trials plain makespan_ns | wc -l); n_t=$(c_trials trace makespan_ns | wc -l)
w_p=$(awk -F'\t' '$1 == "plain" { print $3 }' "$C_RUNS" | median); w_t=$(awk -F'\t' '$1 == "trace" { print $3 }' "$C_RUNS" | median)
c_p=$(awk -F'\t' '$1 == "plain" { print $4 }' "$C_RUNS" | median); c_t=$(awk -F'\t' '$1 == "trace" { print $4 }' "$C_RUNS" | median)
ms() { awk -v v="$1" 'BEGIN { printf "%.2f", v / 1e6 }'; }

echo "## c. Cost of --trace"
echo
echo "\`schedlab run [--trace] --policy other --tasks 4 --cpus 0 --work 50ms --trials 7\`, 8 invocations alternating (order: trace plain plain trace plain trace trace plain) after one uncounted calibrating invocation, one database."
echo
echo "| measure | without --trace | with --trace | ratio with/without |"
echo "|---|---|---|---|"
echo "| trials (ok, measured) | $n_p | $n_t | |"
echo "| median makespan per trial | $(ms "$mk_p") ms | $(ms "$mk_t") ms | $(ratio "$mk_t" "$mk_p") |"
echo "| median harness CPU per trial (launcher + host) | $(us "$hc_p") us | $(us "$hc_t") us | $(ratio "$hc_t" "$hc_p") |"
echo "| median wall time per invocation (7 trials, incl. trace read/parse/store) | ${w_p} s | ${w_t} s | $(ratio "$w_t" "$w_p") |"
echo "| median CPU time per invocation (user+sys, schedlab and all its children incl. tasks) | ${c_p} s | ${c_t} s | $(ratio "$c_t" "$c_p") |"
echo
echo "Trace events lost (with --trace): $(q "$DBC" "SELECT ifnull(sum(trace_lost_events), 0) FROM trials"); schedlab warnings during check c: $(q "$DBC" "SELECT count(*) FROM warnings")."
echo
echo "- load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
note "done"
