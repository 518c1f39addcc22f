#!/usr/bin/env python3
"""The table bench/compare.sh prints: snapstream's figures from its JSON lines (each
configuration's best round) next to llama.cpp's reference figures, then each goal of the
quantised-speed work: a ratio of two configurations is taken within each round, where both ran
minutes apart, and the median round's is the measure (with the lowest and highest beside it)."""
import json
import statistics
import sys


def main():
    runs = {}
    for line in open(sys.argv[1]):
        if line.startswith("{"):
            run = json.loads(line)
            runs.setdefault(run["label"], []).append(run)
    reference = json.load(open(sys.argv[2]))["rows"]

    # A configuration's best round: a shared machine only ever slows a run down.
    def best(label, key):
        return max(runs[label], key=lambda run: run[key])

    def decode(label):
        return best(label, "decode_tokens_per_s")["decode_tokens_per_s"]

    def prefill(label):
        return best(label, "prefill_tokens_per_s")["prefill_tokens_per_s"]

    def served(label, key="completion_tokens_per_s"):
        return best(label, key)[key]

    rows = [
        ("f32 decode, 1 sequence", decode("f32 x1")),
        ("f16 decode, 1 sequence", decode("f16 x1")),
        ("q8_0 decode, 1 sequence", decode("q8_0 x1")),
        ("q4_k decode, 1 sequence", decode("q4_k x1")),
        ("q8_0 decode, 16 sequences", decode("q8_0 x16")),
        ("q4_k decode, 16 sequences", decode("q4_k x16")),
        ("q8_0 decode, 16 sequences, f32 cache", decode("q8_0 x16 f32 cache")),
        ("q4_k decode, 16 sequences, f32 cache", decode("q4_k x16 f32 cache")),
        ("q8_0 server, 16 clients, tokens/s", served("q8_0 server x16")),
        ("q4_k server, 16 clients, tokens/s", served("q4_k server x16")),
        ("f32 server, 16 clients, tokens/s", served("f32 server x16")),
        ("f32 prefill 512", prefill("f32 prefill 512")),
        ("f16 prefill 512", prefill("f16 prefill 512")),
        ("q8_0 prefill 512", prefill("q8_0 prefill 512")),
        ("q4_k prefill 512", prefill("q4_k prefill 512")),
    ]
    print(f"\n{'work (tokens/s)':40} {'snapstream':>11} {'llama.cpp':>10} {'ratio':>7}")
    for name, value in rows:
        ref = reference.get(name)
        ref_text = f"{ref:>10.1f} {value / ref:>6.2f}x" if ref else f"{'':>10} {'':>7}"
        print(f"{name:40} {value:>11.1f} {ref_text}")

    # Per round: a share, or the ratio of two configurations of that round. The best rounds of
    # two configurations can come from different minutes of a machine whose speed comes and goes.
    def per_round(label, key):
        return [run[key] for run in runs[label]]

    def ratio(numerator, denominator, key):
        return [a[key] / b[key] for a, b in zip(runs[numerator], runs[denominator])]

    tokens, served_tokens = "decode_tokens_per_s", "completion_tokens_per_s"
    goals = [
        ("q8_0 decode roofline share, 1 sequence", per_round("q8_0 x1", "decode_roofline_share"), 0.80),
        ("q4_k decode roofline share, 1 sequence", per_round("q4_k x1", "decode_roofline_share"), 0.70),
        ("q8_0 16 sequences / 1", ratio("q8_0 x16", "q8_0 x1", tokens), 3.0),
        ("q4_k 16 sequences / 1", ratio("q4_k x16", "q4_k x1", tokens), 3.0),
        ("q8_0 server 16 clients / 1", ratio("q8_0 server x16", "q8_0 server x1", served_tokens), 2.5),
        ("q4_k server 16 clients / 1", ratio("q4_k server x16", "q4_k server x1", served_tokens), 2.5),
        ("q8_0 prefill / f32", ratio("q8_0 prefill 512", "f32 prefill 512", "prefill_tokens_per_s"), 1.0),
        ("q4_k prefill / f32", ratio("q4_k prefill 512", "f32 prefill 512", "prefill_tokens_per_s"), 1.0),
        ("f16 prefill / f32", ratio("f16 prefill 512", "f32 prefill 512", "prefill_tokens_per_s"), 1.0),
        ("stories260K 16 sequences / 1", ratio("stories260K x16", "stories260K x1", tokens), 3.0),
        ("stories260K server requests/s, 8 clients / 1",
         ratio("stories260K server x8", "stories260K server x1", "requests_per_s"), 2.0),
    ]
    print(f"\n{'goal':46} {'median':>7} {'rounds':>11} {'needed':>7}")
    for name, values, needed in goals:
        middle = statistics.median(values)
        spread = f"{min(values):.2f}-{max(values):.2f}"
        print(f"{name:46} {middle:>7.2f} {spread:>11} {needed:>7.2f} {'met' if middle >= needed else 'NOT MET'}")
    errors = sum(run.get("errors", 0) for label_runs in runs.values() for run in label_runs)
    if errors:
        print(f"\n{errors} server requests failed; see the JSON lines above")


if __name__ == "__main__":
    main()
