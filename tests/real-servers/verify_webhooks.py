"""Checks webhook deliveries with the `standardwebhooks` package, an
implementation of Standard Webhooks independent of the server's: reads a
JSON array of {"secret", "headers", "body"} on stdin and prints a JSON array
holding, for each, "ok" or why it does not verify."""
import json
import sys

from standardwebhooks import Webhook

results = []
for item in json.load(sys.stdin):
    try:
        Webhook(item["secret"]).verify(item["body"].encode(), item["headers"])
        results.append("ok")
    except Exception as e:  # every refusal is reported, not raised
        results.append(f"{type(e).__name__}: {e}")
print(json.dumps(results))
