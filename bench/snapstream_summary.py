"""Summarises bench/snapstream.sh's JSON lines: SnapStream's decode speedup over the full cache
next to the speedup its bytes per step predict, SnapKV's share of prefill, and batching gains."""
import json
import sys


def main(path):
    runs = {}
    with open(path) as f:
        for line in f:
            if line.startswith("{"):
                run = json.loads(line)
                runs[run["label"]] = run

    def step_bytes(run):
        return run["weight_bytes_per_step"] + run["kv_bytes_per_step"]

    print("\nSnapStream C=1024 against the full cache, llama-110m, 4096-token prompts:")
    for n in (1, 16):
        full, snap = runs.get(f"long full-cache x{n}"), runs.get(f"long C=1024 x{n}")
        if not full or not snap:
            continue
        measured = snap["decode_tokens_per_s"] / full["decode_tokens_per_s"]
        predicted = step_bytes(full) / step_bytes(snap)
        print(f"  x{n:<3} decode {full['decode_tokens_per_s']:.1f} -> {snap['decode_tokens_per_s']:.1f} tok/s: "
              f"{measured:.2f}x measured, {predicted:.2f}x predicted by bytes per step "
              f"({step_bytes(full) / 1e6:.0f} MB -> {step_bytes(snap) / 1e6:.0f} MB), {measured / predicted:.0%} of it; "
              f"SnapKV {snap['compaction_share_of_prefill']:.1%} of prefill")
    print("Aggregate decode of concurrent short requests (against one request):")
    for model in ("stories260K", "llama-110m"):
        single = runs.get(f"short {model} x1")
        if not single:
            continue
        cells = []
        for n in (1, 4, 16):
            run = runs.get(f"short {model} x{n}")
            if run:
                cells.append(f"x{n} {run['decode_tokens_per_s']:.1f} tok/s ({run['decode_tokens_per_s'] / single['decode_tokens_per_s']:.2f}x)")
        print(f"  {model}: " + ", ".join(cells))


if __name__ == "__main__":
    main(sys.argv[1])
