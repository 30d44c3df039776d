#!/usr/bin/env bash
# What the kernel protocol costs: the numba peer fuzzed through the protocol,
# with both ends timing themselves. sebt times each request from the first
# byte written to the last byte of the reply, and the campaign from the first
# request to the last reply (SEBT_KERNEL_STATS; the handshake apart: it is
# the kernel's start-up, numba loading its cache, which a kernel in process
# pays too and fuzz's cases/s does not count). The kernel times its own
# functions (SEBT_KERNEL_PROFILE). The difference is the protocol: pipes,
# wake-ups, framing, numpy conversions on both sides. The same kernel
# functions called in process on the same cases would take the campaign
# without that difference, so
#   in-process cases/s = cases / (campaign seconds - protocol seconds)
# and the protocol's cost is protocol seconds / campaign seconds.
# usage: bench/kernel_protocol.sh SEBT [RUNS] [ITERATIONS]   (writes bench/results/kernel-protocol/)
set -eu
sebt="$(realpath "$1")" runs="${2:-3}" iters="${3:-1000}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$here/results/kernel-protocol"
tmp="$(mktemp -d /tmp/sebt-kp-bench.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
kernel="exec:/usr/bin/python3 $here/peers/numba_peer.py --serve"
echo "load before: $(uptime)" | tee "$tmp/load.txt"
for r in $(seq 1 "$runs"); do
  rm -f "$tmp/s.json" "$tmp/p.json"
  SEBT_KERNEL_STATS="$tmp/s.json" SEBT_KERNEL_PROFILE="$tmp/p.json" \
    "$sebt" fuzz --backend "$kernel" --iterations "$iters" --no-save > "$tmp/fuzz.txt" 2>&1 || true
  grep -E '^cases ' "$tmp/fuzz.txt" > "$tmp/cases.txt"
  /usr/bin/python3 - "$tmp" "$r" >> "$tmp/runs.jsonl" <<'PY'
import json, re, sys
tmp, run = sys.argv[1], int(sys.argv[2])
m = re.match(r"cases (\d+), combos checked (\d+), ([0-9.]+) s", open(tmp + "/cases.txt").read())
cases, combos, fuzz_secs = int(m.group(1)), int(m.group(2)), float(m.group(3))
s = json.loads(open(tmp + "/s.json").read().splitlines()[-1])
p = json.loads(open(tmp + "/p.json").read().splitlines()[-1])
secs = s["span_seconds"]          # fuzz prints its time to 0.1 s; this is to the microsecond
proto = s["exchange_seconds"] - p["compute_seconds"]
print(json.dumps({"run": run, "cases": cases, "combos": combos, "campaign_seconds": secs,
                  "fuzz_reported_seconds": fuzz_secs, "requests": s["requests"],
                  "round_trips": s["round_trips"], "bytes_out": s["bytes_out"], "bytes_in": s["bytes_in"],
                  "handshake_seconds": s["handshake_seconds"],
                  "exchange_seconds": s["exchange_seconds"], "kernel_compute_seconds": p["compute_seconds"],
                  "kernel_busy_seconds": p["busy_seconds"], "kernel_send_seconds": p.get("send_seconds", 0.0),
                  "protocol_seconds": proto,
                  "kernel_framing_seconds": p["busy_seconds"] - p["compute_seconds"],
                  "pipe_seconds": s["exchange_seconds"] - p["busy_seconds"],
                  "protocol_share": proto / secs, "cases_per_s_protocol": cases / secs,
                  "cases_per_s_in_process": cases / (secs - proto),
                  "latency_ms_per_round_trip": 1000 * proto / s["round_trips"],
                  "bytes_per_round_trip": (s["bytes_out"] + s["bytes_in"]) / s["round_trips"]}))
PY
  tail -1 "$tmp/runs.jsonl"
done
echo "load after: $(uptime)" | tee -a "$tmp/load.txt"
mkdir -p "$out"
cp "$tmp/runs.jsonl" "$out/runs.jsonl"
/usr/bin/python3 - "$tmp" "$out" "$iters" <<'PY' | tee "$out/summary.txt"
import json, statistics, sys
tmp, out, iters = sys.argv[1], sys.argv[2], sys.argv[3]
runs = [json.loads(l) for l in open(tmp + "/runs.jsonl")]
med = lambda k: statistics.median(r[k] for r in runs)
print("kernel protocol cost, numba peer (bench/peers/numba_peer.py --serve), sebt fuzz --iterations %s, %d runs (medians)" % (iters, len(runs)))
print(open(tmp + "/load.txt").read().strip())
print("cases per run                    %d (%d combos)" % (med("cases"), med("combos")))
print("round trips per run              %d (%d requests: a RUN, and its FEATURES in the same write)" % (med("round_trips"), med("requests")))
print("bytes per round trip             %.0f (both ways)" % med("bytes_per_round_trip"))
print("protocol time per round trip     %.3f ms (sebt's exchange time minus the kernel's compute time)" % med("latency_ms_per_round_trip"))
print("  of which kernel-side framing   %.3f s per run (sebt_kernel.py: numpy and writing replies;" % med("kernel_framing_seconds"))
print("                                 %.3f s of it in writev, waiting for sebt to drain the pipe)" % med("kernel_send_seconds"))
print("  of which pipes and wake-ups    %.3f s per run (and sebt's own encoding and decoding)" % med("pipe_seconds"))
print("kernel start-up (handshake)      %.2f s, not counted" % med("handshake_seconds"))
print("fuzz cases/s through protocol    %.1f" % med("cases_per_s_protocol"))
print("fuzz cases/s in process (est.)   %.1f" % med("cases_per_s_in_process"))
print("protocol share of the campaign   %.1f%%  (target <= 20%%)" % (100 * med("protocol_share")))
PY
