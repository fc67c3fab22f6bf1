#!/usr/bin/env bash
# Cross-checks of the field's workloads against the real programs (issue 19), side by side,
# interleaved, in one sitting (results: bench/crosschecks.md, "The field's workloads"):
#
#   msg:   hackbench (rt-tests) and `perf bench sched messaging` against
#          `schedlab run --workload messaging`: -g 2 -l 200 and -g 4 -l 500, processes and
#          threads, pipe and socket (F = 20, S = 100); the figure is the time in seconds.
#   pipe:  `taskset -c 0 perf bench sched pipe -l 100000 [-T]` against
#          `schedlab run --workload pipe --loops 100000 --cpus 0 --kind process|thread`;
#          the figure is microseconds per round trip.
#   sch:   schbench (built by hand from masoncl/schbench, never vendored here; path in
#          SCHBENCH) -m 1 -t 2 -r 10 and -m 2 -t 4 -r 10 against `--workload request` with
#          the same threads, workers and duration, and as much CPU per request as schbench's
#          own calibration run (-C) spends at the start of the sitting (its CPU time over its
#          requests: schedlab's --run is CPU time, schbench -C's p50 wall time); p50/p99 wake-up and
#          request latency (us) and requests per second.
#
# Each configuration runs REPS times (default 5); within a repetition every configuration
# runs once, the peers and schedlab one after another, so drift of the machine hits all
# alike. Every raw output and a TSV of all figures stay in OUT (default: a new temporary
# directory, printed). Needs root only for nothing here (no RT policies); schedlab built with
# `cargo build --release`. Parts: msg pipe sch (default all). Prints Markdown on stdout.
#     bash bench/crosschecks_workloads.sh [part...]
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SL=${SCHEDLAB:-$ROOT/target/release/schedlab}
SCH=${SCHBENCH:-schbench}
REPS=${REPS:-5}
OUT=${OUT:-$(mktemp -d /tmp/schedlab-xw.XXXXXX)}
mkdir -p "$OUT"
PARTS=${*:-msg pipe sch}
note() { echo "crosschecks_workloads: $*" >&2; }
[[ -x $SL ]] || { note "no schedlab binary at $SL (cargo build --release)"; exit 1; }
for t in hackbench perf taskset sqlite3 python3; do
    command -v $t >/dev/null || { note "needs $t (apt-get install rt-tests linux-perf sqlite3)"; exit 1; }
done
TSV=$OUT/figures.tsv
[[ -f $TSV ]] || printf 'part\tconfig\trep\ttool\tfigure\tvalue\n' > "$TSV"
note "raw outputs and figures in $OUT"

fig() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >> "$TSV"; }
# One schedlab trial into its own database; prints nothing, keeps the log.
sl() { local db=$1; shift; "$SL" run --db "$db" --quiet --trials 1 --sample-interval off "$@" > "$db.log" 2>&1; }
q() { sqlite3 "$1" "$2"; }
# schedlab's harness cost in a trial: its launcher's and host's CPU during the trial, as a
# share of the tasks' CPU (issue 19's benchmark; goal <= 0.5 %).
harness() { fig "$1" "$2" "$3" schedlab harness_pct "$(q "$4" 'SELECT 100.0 * harness_cpu_ns / (SELECT SUM(cpu_ns) FROM tasks) FROM trials')"; }

msg() {
    local rep=$1 g l kind ipc hf pf cfg f db
    for gl in "2 200" "4 500"; do
        read -r g l <<< "$gl"
        for kind in process thread; do
            for ipc in pipe socket; do
                hf=(); pf=()
                [[ $kind = thread ]] && { hf+=(--threads); pf+=(-t); }
                [[ $ipc = pipe ]] && { hf+=(-p); pf+=(-p); }
                cfg="g${g}_l${l}_${kind}_${ipc}"
                f=$OUT/msg_${cfg}_r$rep
                hackbench -g "$g" -l "$l" "${hf[@]}" > "$f.hackbench" 2>&1
                fig msg "$cfg" "$rep" hackbench time_s "$(grep -oE 'Time: [0-9.]+' "$f.hackbench" | cut -d' ' -f2)"
                perf bench sched messaging -g "$g" -l "$l" "${pf[@]}" > "$f.perf" 2>&1
                fig msg "$cfg" "$rep" perf time_s "$(grep -oE 'Total time: +[0-9.]+' "$f.perf" | grep -oE '[0-9.]+$')"
                db=$f.db
                sl "$db" --workload messaging --message-groups "$g" --fds 20 --loops "$l" --data-size 100 --ipc "$ipc" --kind "$kind"
                fig msg "$cfg" "$rep" schedlab time_s "$(q "$db" 'SELECT makespan_ns / 1e9 FROM trials')"
                harness msg "$cfg" "$rep" "$db"
            done
        done
    done
}

pipe() {
    local rep=$1 kind pf f db
    for kind in process thread; do
        pf=(); [[ $kind = thread ]] && pf+=(-T)
        f=$OUT/pipe_${kind}_r$rep
        taskset -c 0 perf bench sched pipe -l 100000 "${pf[@]}" > "$f.perf" 2>&1
        fig pipe "cpu0_$kind" "$rep" perf us_per_round_trip "$(grep -oE '[0-9.]+ usecs/op' "$f.perf" | cut -d' ' -f1)"
        db=$f.db
        sl "$db" --workload pipe --loops 100000 --cpus 0 --kind "$kind"
        fig pipe "cpu0_$kind" "$rep" schedlab us_per_round_trip "$(q "$db" 'SELECT makespan_ns / 1e3 / ops FROM trials')"
        harness pipe "cpu0_$kind" "$rep" "$db"
    done
}

# schbench's last percentile blocks: wake p50 p99, request p50 p99, average rps.
sch_figures() {
    python3 - "$1" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
def block(name):
    i = text.rfind(name)
    b = text[i:].split("min=")[0]
    return [int(re.search(rf"{q}th: (\d+)", b).group(1)) for q in ("50.0", "99.0")]
w, r = block("Wakeup Latencies"), block("Request Latencies")
rps = float(re.findall(r"average rps: ([0-9.]+)", text)[-1])
print(w[0], w[1], r[0], r[1], rps)
PY
}

sch() {
    local rep=$1 m t cfg f db v
    for mt in "1 2" "2 4"; do
        read -r m t <<< "$mt"
        cfg="m${m}_t${t}"
        f=$OUT/sch_${cfg}_r$rep
        "$SCH" -m "$m" -t "$t" -r 10 > "$f.schbench" 2>&1
        read -r -a v <<< "$(sch_figures "$f.schbench")"
        fig sch "$cfg" "$rep" schbench wake_p50_us "${v[0]}"; fig sch "$cfg" "$rep" schbench wake_p99_us "${v[1]}"
        fig sch "$cfg" "$rep" schbench request_p50_us "${v[2]}"; fig sch "$cfg" "$rep" schbench request_p99_us "${v[3]}"
        fig sch "$cfg" "$rep" schbench rps "${v[4]}"
        db=$f.db
        sl "$db" --workload request --message-threads "$m" --workers "$t" --run "${REQUEST_US}us" --duration 10s
        read -r -a v <<< "$(q "$db" "SELECT wake_p50_ns/1e3, wake_p99_ns/1e3, op_p50_ns/1e3, op_p99_ns/1e3, ops_per_s FROM trials" | tr '|' ' ')"
        fig sch "$cfg" "$rep" schedlab wake_p50_us "${v[0]}"; fig sch "$cfg" "$rep" schedlab wake_p99_us "${v[1]}"
        fig sch "$cfg" "$rep" schedlab request_p50_us "${v[2]}"; fig sch "$cfg" "$rep" schedlab request_p99_us "${v[3]}"
        fig sch "$cfg" "$rep" schedlab rps "${v[4]}"
        harness sch "$cfg" "$rep" "$db"
    done
}

if [[ " $PARTS " == *" sch "* ]]; then
    # schbench's own calibration run (-C: compute only, no lock, no sleep), one worker. Its
    # request p50 is wall time, which a loaded machine inflates; schedlab's --run is CPU
    # time. So the work per request is schbench's CPU time (user + system, every thread,
    # read from the kernel through rusage) divided by the requests it completed (its
    # average rps times its 5 s), which load does not change.
    python3 - "$SCH" "$OUT/sch_calibration.schbench" > "$OUT/sch_calibration.cpu" <<'PY'
import resource, subprocess, sys
with open(sys.argv[2], "w") as out:
    subprocess.run([sys.argv[1], "-C", "-m", "1", "-t", "1", "-r", "5"], stdout=out, stderr=subprocess.STDOUT, check=True)
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(ru.ru_utime + ru.ru_stime)
PY
    CPU_S=$(cat "$OUT/sch_calibration.cpu")
    read -r -a v <<< "$(sch_figures "$OUT/sch_calibration.schbench")"
    REQUEST_US=$(python3 -c "print(round($CPU_S * 1e6 / (${v[4]} * 5)))")
    note "schbench -C: ${CPU_S} s of CPU for ${v[4]} requests/s over 5 s: ${REQUEST_US} us of CPU per request (its wall-time p50: ${v[2]} us)"
    fig sch calibration 1 schbench request_cpu_us "$REQUEST_US"
    fig sch calibration 1 schbench request_wall_p50_us "${v[2]}"
fi
for rep in $(seq 1 "$REPS"); do
    for part in $PARTS; do note "$part, repetition $rep"; "$part" "$rep"; done
done
python3 "$ROOT/bench/crosschecks_workloads.py" "$TSV"
