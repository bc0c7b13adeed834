#!/usr/bin/env python3
"""Posts at a steady rate against a running server until it answers
`read_only` (a move's switch-over) or is stopped; prints how many posts it
acknowledged, refused as read-only, and the ids acknowledged to ACKED_FILE.

    post-load.py URL API_KEY RATE USERS ACKED_FILE
"""

import http.client
import json
import random
import sys
import time
from urllib.parse import urlparse


def main():
    url, key, rate, users, acked_file = sys.argv[1:6]
    rate, users = float(rate), int(users)
    target = urlparse(url)
    conn = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    acked, refused, n = [], 0, 0
    start = time.monotonic()
    with open(acked_file, "w") as out:
        while True:
            n += 1
            due = start + n / rate
            now = time.monotonic()
            if due > now:
                time.sleep(due - now)
            author = f"u{random.randrange(users)}"
            body = json.dumps({"message": f"during the move {n}"})
            conn.request("POST", f"/users/{author}/posts", body, headers)
            resp = conn.getresponse()
            reply = json.loads(resp.read() or b"{}")
            if resp.status == 201:
                acked.append(reply["id"])
                out.write(reply["id"] + "\n")
                out.flush()
            elif resp.status == 503 and reply.get("error", {}).get("code") == "read_only":
                refused += 1
                break
            elif resp.status >= 500:
                sys.exit(f"{resp.status} {reply}")
    print(json.dumps({"acknowledged": len(acked), "refused_read_only": refused,
                      "seconds": round(time.monotonic() - start, 1)}))


if __name__ == "__main__":
    main()
