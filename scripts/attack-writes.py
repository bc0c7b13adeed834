#!/usr/bin/env python3
"""Writes as an attacker would: ACCOUNTS user accounts (u0, u1, ...), each
with its own user token, post flat out from THREADS connections for SECONDS
against a running `socialite up`; prints what the server answered, by
status and error code, as JSON. Run it beside `socialite bench --mix
read=100` to see whether the flood slows other users' reads or freshness.

    attack-writes.py URL DATA_DIR ACCOUNTS SECONDS THREADS

The tokens are signed with the first secret of DATA_DIR/auth/token-secrets
(HS256, an hour long), as `socialite token` signs them.
"""

import base64
import collections
import hashlib
import hmac
import http.client
import json
import sys
import threading
import time
from urllib.parse import urlparse


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=")


def token(secret, user):
    now = int(time.time())
    head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64(json.dumps({"sub": user, "iat": now, "exp": now + 3600}).encode())
    signed = head + b"." + body
    return (signed + b"." + b64(hmac.new(secret, signed, hashlib.sha256).digest())).decode()


def main():
    url, data_dir, accounts, seconds, threads = sys.argv[1:6]
    accounts, seconds, threads = int(accounts), float(seconds), int(threads)
    secret = open(f"{data_dir}/auth/token-secrets").read().splitlines()[0].strip().encode()
    tokens = [(f"u{i}", token(secret, f"u{i}")) for i in range(accounts)]
    target = urlparse(url)
    answers = collections.Counter()
    lock = threading.Lock()
    end = time.monotonic() + seconds

    def flood(t):
        conn = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
        mine = collections.Counter()
        n = t
        while time.monotonic() < end:
            user, tok = tokens[n % accounts]
            n += threads
            headers = {"Authorization": f"Bearer {tok}", "Content-Type": "application/json"}
            try:
                conn.request("POST", f"/users/{user}/posts", json.dumps({"message": "flood"}), headers)
                resp = conn.getresponse()
                body = resp.read()
            except (OSError, http.client.HTTPException):
                mine["connection failed"] += 1
                conn = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
                continue
            if resp.status == 201:
                mine["201"] += 1
                continue
            code = json.loads(body)["error"]["code"] if body else ""
            retry = "with Retry-After" if resp.getheader("retry-after") else "WITHOUT Retry-After"
            mine[f"{resp.status} {code} {retry}"] += 1
        with lock:
            answers.update(mine)

    workers = [threading.Thread(target=flood, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    total = sum(answers.values())
    print(json.dumps({"accounts": accounts, "seconds": seconds, "requests": total,
                      "per_second": round(total / seconds), "answers": dict(answers)}, indent=2))


if __name__ == "__main__":
    main()
