#!/usr/bin/env python3
"""Checks that the workspace's `rust-version` is true: at least the highest
`rust-version` that any package in Cargo.lock declares. Only one toolchain
can be installed where CI runs, so the claim is checked by reading the
dependencies' manifests (`cargo metadata`) rather than by building with an
older compiler. Exits 1 when the workspace claims less."""

import json
import subprocess
import sys
import tomllib
from pathlib import Path


def version(text):
    return tuple(int(x) for x in text.split("."))


def main():
    root = Path(__file__).resolve().parent.parent
    declared = tomllib.loads((root / "Cargo.toml").read_text())["workspace"]["package"]["rust-version"]
    meta = json.loads(subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--locked"],
        cwd=root, check=True, capture_output=True, text=True).stdout)
    needed = max(
        (version(p["rust_version"]), f'{p["name"]} {p["version"]}')
        for p in meta["packages"]
        if p.get("rust_version") and p["id"] not in meta["workspace_members"])
    if version(declared) < needed[0]:
        print(f"rust-version {declared} is below what {needed[1]} needs "
              f"({'.'.join(map(str, needed[0]))})")
        sys.exit(1)
    print(f"rust-version {declared} covers every dependency "
          f"(the highest need is {needed[1]}: {'.'.join(map(str, needed[0]))})")


if __name__ == "__main__":
    main()
