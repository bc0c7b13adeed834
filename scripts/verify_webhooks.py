#!/usr/bin/env python3
"""Verifies captured webhook deliveries with the official Standard Webhooks
library (`standardwebhooks` on PyPI), as a receiver would.

The file holds one JSON object per line: `headers` (name -> value), `body`
(base64) and `secrets` (every secret that must verify it: two while a
rotation's grace lasts). Each delivery must verify with each secret; the
same delivery with its body changed, or signed properly but stamped ten
minutes ago, must be refused. Exits non-zero, naming the delivery, if not.
"""

import base64
import json
import sys
from datetime import datetime, timedelta, timezone

from standardwebhooks.webhooks import Webhook, WebhookVerificationError


def refused(hook, body, headers):
    try:
        hook.verify(body, headers)
    except WebhookVerificationError:
        return True
    return False


def main(path):
    checked = 0
    with open(path) as f:
        for n, line in enumerate(f, 1):
            d = json.loads(line)
            body = base64.b64decode(d["body"])
            headers = d["headers"]
            for secret in d["secrets"]:
                Webhook(secret).verify(body, headers)
            hook = Webhook(d["secrets"][0])
            if not refused(hook, body + b" ", headers):
                sys.exit(f"delivery {n}: a changed body was accepted")
            then = datetime.now(tz=timezone.utc) - timedelta(minutes=10)
            old = dict(headers)
            old["webhook-timestamp"] = str(int(then.timestamp()))
            old["webhook-signature"] = hook.sign(headers["webhook-id"], then, body.decode())
            if not refused(hook, body, old):
                sys.exit(f"delivery {n}: a timestamp ten minutes old was accepted")
            checked += 1
    if checked == 0:
        sys.exit("no delivery to verify")
    print(f"verified {checked} deliveries; changed bodies and old timestamps refused")


if __name__ == "__main__":
    main(sys.argv[1])
