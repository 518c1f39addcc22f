#!/usr/bin/env python3
"""Concurrent clients against a running server's /v1/completions: each client sends requests
back to back for a fixed time; prints one JSON object with requests/s, completion tokens/s
(from each response's usage) and latency percentiles. Standard library only."""
import argparse
import http.client
import json
import statistics
import threading
import time


def client(host, port, body, deadline, results, errors):
    connection = http.client.HTTPConnection(host, port, timeout=600)
    while time.monotonic() < deadline:
        started = time.monotonic()
        try:
            connection.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
            response = connection.getresponse()
            payload = response.read()
        except (OSError, http.client.HTTPException) as error:
            errors.append(repr(error))
            connection.close()
            connection = http.client.HTTPConnection(host, port, timeout=600)
            continue
        if response.status != 200:
            errors.append(f"HTTP {response.status}: {payload[:200]!r}")
            continue
        tokens = json.loads(payload)["usage"]["completion_tokens"]
        results.append((time.monotonic() - started, tokens))
    connection.close()


def wait_until_ready(host, port, seconds=300):
    """Polls /health until the server has loaded its model (it answers 503 until then)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            connection = http.client.HTTPConnection(host, port, timeout=5)
            connection.request("GET", "/health")
            if connection.getresponse().status == 200:
                return
        except (OSError, http.client.HTTPException):
            pass
        time.sleep(0.2)
    raise SystemExit(f"server at {host}:{port} not ready after {seconds} s")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--clients", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--prompt", default="Once upon a time")
    parser.add_argument("--max-tokens", type=int, default=16)
    args = parser.parse_args()
    wait_until_ready(args.host, args.port)
    body = json.dumps({"prompt": args.prompt, "max_tokens": args.max_tokens, "temperature": 0})
    results, errors = [], []
    started = time.monotonic()
    deadline = started + args.seconds
    threads = [threading.Thread(target=client, args=(args.host, args.port, body, deadline, results, errors))
               for _ in range(args.clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    latencies = sorted(latency for latency, _ in results)
    print(json.dumps({
        "clients": args.clients,
        "requests": len(results),
        "errors": len(errors),
        "first_error": errors[0] if errors else None,
        "seconds": round(elapsed, 3),
        "requests_per_s": len(results) / elapsed,
        "completion_tokens_per_s": sum(tokens for _, tokens in results) / elapsed,
        "mean_completion_tokens": statistics.mean(tokens for _, tokens in results) if results else 0,
        "p50_s": latencies[len(latencies) // 2] if latencies else None,
        "p99_s": latencies[min(len(latencies) - 1, len(latencies) * 99 // 100)] if latencies else None,
    }))


if __name__ == "__main__":
    main()
