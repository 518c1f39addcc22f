-- wrk request for bench/server.sh: a short greedy completion.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"prompt": "Once upon a time", "max_tokens": 16, "temperature": 0}'
