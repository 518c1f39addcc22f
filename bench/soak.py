#!/usr/bin/env python3
"""Soak load against a running snapstream server: CLIENTS threads send a mix of requests for a
fixed time (greedy and sampled, streaming and not, long prompts that SnapStream compresses,
clients that hang up mid-stream or right after sending, malformed requests), while the server's
resident memory is sampled every second. Then it checks that every good request finished
correctly (greedy ones equal to the same prompt run alone), that the metrics count every
request that reached the engine (success + abort + error = sent), that the running, waiting and
KV-usage gauges return to 0, and that resident anonymous memory grew less than --max-rss-growth
after the warm-up. Prints one JSON report; exits 1 when a check fails. Standard library only."""
import argparse
import http.client
import json
import random
import re
import socket
import statistics
import threading
import time

LONG_FILLER = ("The little dog ran to the park and played with a red ball all day long. " * 40).strip()

# (name, prompt, max_tokens): greedy requests whose solo output the load must reproduce.
GREEDY = [
    ("short", "Once upon a time", 24),
    ("question", "What did the little cat see?", 16),
    ("list", "One, two, three,", 32),
    ("long", LONG_FILLER + " Then", 24),
]


def connect(port):
    return http.client.HTTPConnection("127.0.0.1", port, timeout=300)


def post(port, path, body):
    connection = connect(port)
    try:
        connection.request("POST", path, body, {"Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def get(port, path):
    connection = connect(port)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read().decode()
    finally:
        connection.close()


def completion(prompt, max_tokens, stream, temperature=0.0, seed=None):
    body = {"prompt": prompt, "max_tokens": max_tokens, "temperature": temperature, "stream": stream}
    if seed is not None:
        body["seed"] = seed
    return json.dumps(body)


def streamed(payload):
    """The text of an SSE completion body, and its last finish_reason; raises on an error event."""
    text, finish = "", None
    events = [line[6:] for line in payload.decode().split("\n") if line.startswith("data: ")]
    if not events or events[-1] != "[DONE]":
        raise AssertionError(f"the stream did not end with [DONE]: {payload[-200:]!r}")
    for event in events[:-1]:
        chunk = json.loads(event)
        if "error" in chunk:
            raise AssertionError(f"error event: {chunk['error']}")
        for choice in chunk["choices"]:
            text += choice["text"]
            finish = choice["finish_reason"] or finish
    return text, finish


def whole(payload):
    choice = json.loads(payload)["choices"][0]
    return choice["text"], choice["finish_reason"]


def hang_up_after(port, body, events):
    """Starts a streaming request, reads until `events` data events arrived, then closes."""
    raw = (f"POST /v1/completions HTTP/1.1\r\nHost: soak\r\nContent-Type: application/json\r\n"
           f"Content-Length: {len(body)}\r\n\r\n{body}").encode()
    with socket.create_connection(("127.0.0.1", port), timeout=300) as s:
        s.sendall(raw)
        seen = b""
        while seen.count(b"data: ") < events:
            chunk = s.recv(4096)
            if not chunk:
                break
            seen += chunk


def send_and_leave(port, body):
    """Sends a whole non-streaming request and closes before the answer: a cancellation."""
    raw = (f"POST /v1/completions HTTP/1.1\r\nHost: soak\r\nContent-Type: application/json\r\n"
           f"Content-Length: {len(body)}\r\n\r\n{body}").encode()
    with socket.create_connection(("127.0.0.1", port), timeout=300) as s:
        s.sendall(raw)
        time.sleep(0.01)


BAD_BODIES = [
    '{"prompt": "a", "max_tokens": -1}',
    '{"prompt": "a",',
    '{"prompt": 7}',
    '{"prompt": "a", "temperature": "hot"}',
    '{"prompt": "a", "logit_bias": {"x": 1}}',
    '{"prompt": "a", "stream_options": {"include_usage": true}}',
]


class Tally:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = {}
        self.failures = []
        self.latencies = []  # seconds of good requests that ran to their end
        self.sent_to_engine = 0  # requests the engine accepted: every kind but the bad ones

    def add(self, kind, engine, latency=None, failure=None):
        with self.lock:
            self.counts[kind] = self.counts.get(kind, 0) + 1
            self.sent_to_engine += engine
            if latency is not None:
                self.latencies.append(latency)
            if failure is not None and len(self.failures) < 50:
                self.failures.append(f"{kind}: {failure}")


def client(port, solo, deadline, seed, tally):
    rng = random.Random(seed)
    kinds = ["greedy", "greedy_stream", "sampled_stream", "hang_up", "leave", "bad"]
    weights = [35, 25, 10, 10, 5, 15]
    while time.monotonic() < deadline:
        kind = rng.choices(kinds, weights)[0]
        started = time.monotonic()
        try:
            if kind in ("greedy", "greedy_stream"):
                name, prompt, max_tokens = rng.choice(GREEDY)
                stream = kind == "greedy_stream"
                status, payload = post(port, "/v1/completions", completion(prompt, max_tokens, stream))
                if status != 200:
                    raise AssertionError(f"HTTP {status}: {payload[:200]!r}")
                text, finish = streamed(payload) if stream else whole(payload)
                if (text, finish) != solo[name]:
                    raise AssertionError(f"'{name}' gave {text!r} ({finish}), alone {solo[name]!r}")
                tally.add(f"{kind}:{name}", 1, time.monotonic() - started)
            elif kind == "sampled_stream":
                status, payload = post(port, "/v1/completions",
                                       completion("Once upon a time", rng.randint(4, 48), True, 0.8, rng.randint(0, 1 << 30)))
                if status != 200:
                    raise AssertionError(f"HTTP {status}: {payload[:200]!r}")
                _, finish = streamed(payload)
                if finish not in ("length", "stop"):
                    raise AssertionError(f"finish_reason {finish}")
                tally.add(kind, 1, time.monotonic() - started)
            elif kind == "hang_up":
                hang_up_after(port, completion(LONG_FILLER, 64, True), rng.randint(1, 4))
                tally.add(kind, 1)
            elif kind == "leave":
                send_and_leave(port, completion("Once upon a time", 64, False))
                tally.add(kind, 1)
            else:
                status, payload = post(port, "/v1/completions", rng.choice(BAD_BODIES))
                if status != 400:
                    raise AssertionError(f"a bad request got HTTP {status}")
                tally.add(kind, 0)
        except (AssertionError, OSError, http.client.HTTPException, ValueError, KeyError) as error:
            engine = 0 if kind == "bad" else 1
            tally.add(kind, engine, failure=repr(error))


def metric(text, name, label=""):
    """Sum of the samples of `name` whose labels contain `label`."""
    total, found = 0.0, False
    for match in re.finditer(r"^" + re.escape(name) + r"\{([^}]*)\} (\S+)$", text, re.M):
        if label in match.group(1):
            total += float(match.group(2))
            found = True
    return total if found else None


def resident_kib(pid):
    """The server's resident anonymous memory (RssAnon), where a leak grows, and its resident pages
    of mapped files (RssFile): the model's weights read in place come in page by page as they are
    first touched (an embedding row per new token id), bounded by the file's size."""
    kib = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("RssAnon", "RssFile"):
                kib[name] = int(value.split()[0])
    if "RssAnon" not in kib:
        raise SystemExit(f"soak: /proc/{pid}/status reports no RssAnon (Linux 4.5 or later does)")
    return kib["RssAnon"], kib.get("RssFile", 0)


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else None


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pid", type=int, required=True, help="the server's process id, for its resident memory")
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--warm-up", type=float, default=0.2, help="share of the time before memory is the baseline")
    parser.add_argument("--max-rss-growth", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    solo = {}
    for name, prompt, max_tokens in GREEDY:
        status, payload = post(args.port, "/v1/completions", completion(prompt, max_tokens, False))
        if status != 200:
            raise SystemExit(f"soak: the solo run of '{name}' got HTTP {status}: {payload[:300]!r}")
        solo[name] = whole(payload)

    _, before = get(args.port, "/metrics")
    finished_before = metric(before, "snapstream:request_success_total") or 0.0
    tally = Tally()
    started = time.monotonic()
    deadline = started + args.seconds
    threads = [threading.Thread(target=client, args=(args.port, solo, deadline, args.seed * 1000 + i, tally))
               for i in range(args.clients)]
    for thread in threads:
        thread.start()
    rss = []  # (seconds since start, anonymous KiB, file KiB)
    while any(thread.is_alive() for thread in threads):
        rss.append((round(time.monotonic() - started, 1), *resident_kib(args.pid)))
        time.sleep(1.0)
    for thread in threads:
        thread.join()

    # The engine ends hung-up requests at its next step: give it time to settle.
    gauges = {}
    settle_deadline = time.monotonic() + 30
    while time.monotonic() < settle_deadline:
        _, text = get(args.port, "/metrics")
        gauges = {name: metric(text, "snapstream:" + name)
                  for name in ("num_requests_running", "num_requests_waiting", "kv_cache_usage_perc")}
        finished = (metric(text, "snapstream:request_success_total") or 0.0) - finished_before
        if all(value == 0.0 for value in gauges.values()) and finished >= tally.sent_to_engine:
            break
        time.sleep(0.2)
    by_reason = {reason: (metric(text, "snapstream:request_success_total", f'finished_reason="{reason}"') or 0.0)
                 - (metric(before, "snapstream:request_success_total", f'finished_reason="{reason}"') or 0.0)
                 for reason in ("stop", "length", "abort", "error")}

    baseline = [anonymous for at, anonymous, _ in rss if at >= args.warm_up * args.seconds]
    growth = (baseline[-1] - baseline[0]) / baseline[0] if len(baseline) >= 2 else 0.0
    checks = {
        "every good request finished correctly": not tally.failures,
        "metrics count every request sent to the engine": finished == tally.sent_to_engine,
        "running, waiting and KV usage back to 0": all(value == 0.0 for value in gauges.values()),
        f"resident anonymous memory grew less than {args.max_rss_growth:.0%} after warm-up": growth < args.max_rss_growth,
    }
    report = {
        "seconds": args.seconds,
        "clients": args.clients,
        "requests": sum(tally.counts.values()),
        "by_kind": dict(sorted(tally.counts.items())),
        "sent_to_engine": tally.sent_to_engine,
        "finished_in_metrics": finished,
        "finished_by_reason": by_reason,
        "gauges_after": gauges,
        "latency_p50_s": percentile(tally.latencies, 0.5),
        "latency_p99_s": percentile(tally.latencies, 0.99),
        "latency_mean_s": statistics.mean(tally.latencies) if tally.latencies else None,
        "rss_anon_file_kib": rss[:: max(1, len(rss) // 20)] + rss[-1:],
        "rss_anon_growth_after_warm_up": growth,
        "failures": tally.failures,
        "checks": checks,
    }
    print(json.dumps(report, indent=1).replace("\n   ", " ").replace("\n  ],", "],"))
    if not all(checks.values()):
        raise SystemExit("soak: failed: " + ", ".join(name for name, ok in checks.items() if not ok))


if __name__ == "__main__":
    main()
