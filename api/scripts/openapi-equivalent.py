#!/usr/bin/env python3
"""Whether two REST contracts (`socialite openapi` output) describe the same
API: every `$ref` is resolved in both, then the documents are compared
without their `components`. A shared component standing for an inline copy
is no difference; anything else is, and a changed `description` or
`summary` (wording) is listed apart from changes of shape (paths, methods,
parameters, schemas, statuses, bodies, security).

    python3 api/scripts/openapi-equivalent.py before.json after.json

Exit status 0 when the shapes are equal (wording changes are listed),
1 otherwise.
"""

import json
import sys

WORDING = {"description", "summary"}


def resolve(node, doc, seen=()):
    """`node` with every `$ref` into `doc` replaced by what it names."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/"):
            if ref in seen:
                return {"$recursive": ref}
            target = doc
            for part in ref[2:].split("/"):
                target = target[part.replace("~1", "/").replace("~0", "~")]
            # OpenAPI 3.1 lets a reference carry a summary and description
            # of its own, overriding the target's.
            extra = {k: v for k, v in node.items() if k != "$ref"}
            return resolve({**target, **extra}, doc, seen + (ref,))
        return {k: resolve(v, doc, seen) for k, v in node.items()}
    if isinstance(node, list):
        return [resolve(v, doc, seen) for v in node]
    return node


def keyed(node, path):
    """Lists whose order carries no meaning, as maps: parameters by their
    name and place, so that reordering them is no difference."""
    if isinstance(node, dict):
        return {k: keyed(v, path + (k,)) for k, v in node.items()}
    if isinstance(node, list):
        if path and path[-1] == "parameters":
            return {f"{p['in']}:{p['name']}": keyed(p, path) for p in node}
        return [keyed(v, path + (str(i),)) for i, v in enumerate(node)]
    return node


def diff(a, b, path, out):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            here = path + (k,)
            if k not in a:
                out.append((here, "added", None, b[k]))
            elif k not in b:
                out.append((here, "removed", a[k], None))
            else:
                diff(a[k], b[k], here, out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            diff(x, y, path + (str(i),), out)
    elif a != b:
        out.append((path, "changed", a, b))


def contract(doc):
    whole = keyed(resolve(doc, doc), ())
    whole.pop("components", None)
    return whole


def operations(doc):
    return sum(
        1
        for item in doc["paths"].values()
        for m in item
        if m in ("get", "put", "post", "delete", "patch", "head", "options")
    )


def main():
    before, after = (json.load(open(p)) for p in sys.argv[1:3])
    out = []
    diff(contract(before), contract(after), (), out)
    wording = [d for d in out if d[0][-1] in WORDING]
    shape = [d for d in out if d[0][-1] not in WORDING]
    short = lambda v: json.dumps(v)[:160]
    print(f"paths: {len(before['paths'])} -> {len(after['paths'])}; "
          f"operations: {operations(before)} -> {operations(after)}")
    print(f"size: {len(json.dumps(before))} -> {len(json.dumps(after))} bytes "
          f"(compact JSON)")
    print(f"differences of shape: {len(shape)}")
    for path, kind, a, b in shape:
        print(f"  {kind} {'/'.join(path)}: {short(a)} -> {short(b)}")
    print(f"differences of wording: {len(wording)}")
    for path, kind, a, b in wording:
        print(f"  {kind} {'/'.join(path)}:\n    {short(a)}\n    -> {short(b)}")
    sys.exit(1 if shape else 0)


if __name__ == "__main__":
    main()
