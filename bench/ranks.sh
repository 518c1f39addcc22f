#!/usr/bin/env bash
# Tensor-parallel shards as MPI ranks: decode tokens/s of random-weight llama-110m Q8_0 as one
# process with one thread, as 2 ranks of one thread each (mpirun -np 2, the MPI build), and as one
# process with two threads, each the median of 5 runs of 64 decoded tokens after a 128-token
# prompt; with each rank's share of decode time spent in collectives, the peak resident memory of
# every process, and what `snapstream simulate` prices the same split at on configs/hardware/
# cpu-2core.json. On a 2-core machine no speed-up over two threads is expected: the numbers show
# what splitting into processes costs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh >/dev/null
bash scripts/setup.sh libopenmpi-dev openmpi-bin
cmake -S . -B build-mpi -DCMAKE_BUILD_TYPE=Release -DSNAPSTREAM_MPI=ON >/dev/null
cmake --build build-mpi -j "$(nproc)" --target snapstream >/dev/null
model=build/models/llama-110m-q8_0.gguf
mkdir -p build/models
[ -f "$model" ] || build/bin/snapstream make-model --shape llama-110m --dtype q8_0 --seed 1 --out "$model" --log-level warn
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
bench_args=(bench --model "$model" --prompt-tokens 128 --decode-tokens 64 --repeats 5 --bandwidth-mib 0 --json --log-level warn)
results=$(mktemp)
trap 'rm -f "$results"' EXIT
run() {  # run LABEL COMMAND...: one bench, its JSON line labelled, and every process's peak RSS
  local label=$1
  shift
  local rss
  rss=$(mktemp)
  "$@" >"$results.out" 2>"$rss"
  python3 - "$label" "$results.out" "$rss" <<'LINE' | tee -a "$results"
import json, re, sys
label, out, rss = sys.argv[1:]
d = json.load(open(out))
d["label"] = label
d["max_rss_mb"] = [int(m) / 1024 for m in re.findall(r"max_rss_kb (\d+)", open(rss).read())]
print(json.dumps(d))
LINE
  rm -f "$rss" "$results.out"
}
timed=(/usr/bin/time -f "max_rss_kb %M")
run "1 process, 1 thread" "${timed[@]}" build-mpi/bin/snapstream "${bench_args[@]}" --threads 1
run "2 ranks, 1 thread each" mpirun --oversubscribe -np 2 "${timed[@]}" build-mpi/bin/snapstream "${bench_args[@]}" --threads 1 --tp 2
run "1 process, 2 threads" "${timed[@]}" build-mpi/bin/snapstream "${bench_args[@]}" --threads 2
for tp in 1 2; do
  build/bin/snapstream simulate --model llama-110m --weight-dtype q8_0 --system cpu-2core --context 160 --full-cache --tp "$tp" \
    --format json | python3 -c "import json,sys; d=json.load(sys.stdin); print(json.dumps({'label': 'simulate --tp $tp', 'step_seconds': d['step_seconds'], 'collective_seconds': d['breakdown']['collective']}))" |
    tee -a "$results"
done
python3 - "$results" <<'SUMMARY'
import json, sys
runs = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
base = next(r["decode_tokens_per_s"] for r in runs if r["label"] == "1 process, 1 thread")
print(f"\n{'run':26} {'decode tok/s':>12} {'vs 1 thread':>11} {'ms/step':>8} {'collective share by rank':>26} {'max RSS MB':>14}")
for r in runs:
    if "decode_tokens_per_s" in r:
        shares = ", ".join(f"{x['collective_share']:.1%}" for x in r.get("decode_ranks", [])) or "-"
        rss = ", ".join(f"{m:.0f}" for m in r["max_rss_mb"])
        print(f"{r['label']:26} {r['decode_tokens_per_s']:>12.1f} {r['decode_tokens_per_s'] / base:>10.2f}x "
              f"{r['decode_seconds_per_step'] * 1e3:>8.2f} {shares:>26} {rss:>14}")
    else:
        share = r["collective_seconds"] / r["step_seconds"]
        print(f"{r['label']:26} {1 / r['step_seconds']:>12.1f} {'':>11} {r['step_seconds'] * 1e3:>8.2f} {share:>26.1%}  (priced)")
SUMMARY
