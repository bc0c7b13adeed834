#!/usr/bin/env python3
"""Checks the workspace's shape: lines of code per crate, outside the test
crates and test modules (no crate may hold more than MAX_SHARE of them),
import cycles between the modules of each crate (a module that imports
another, directly or through others, may not be imported back by it) and
between its folders (each folder taken as one node, at every depth: no
folder imports one that imports it back), dependencies a crate declares but never names,
functions longer than MAX_FN_LINES outside tests, and any transport (HTTP
or gRPC) type, status or dependency in core or domain. (Every port method
is metered by construction: `core/src/ports/metered.rs` writes each port's
wrapper from the port's own declaration.) Run from the repository root;
exits 1 on a violation.

A module's imports are the paths it names: `use crate::a::b`, `use super::x`,
`use child::y` of a child module, and `crate::`/`super::` paths in code. Each
is resolved to the deepest module that exists. `mod` declarations are not
imports, and neither is anything after a `#[cfg(test)]` at the start of a
line (test modules import their parent by design)."""

import re
import sys
import tomllib
from pathlib import Path

MAX_SHARE = 0.30
MAX_FN_LINES = 100
# Crates made of tests and their helpers only.
TEST_CRATES = {"tests", "testkit"}
# What core may not name: it knows no transport.
TRANSPORT = re.compile(
    r"\b(axum|hyper|tonic|http|StatusCode|HeaderMap|http_status|grpc\w*|\w*_grpc)\b")
TRANSPORT_CRATES = {"axum", "hyper", "tonic", "http", "http-body", "tower-http"}
# Dependencies used only by generated code, which the sources do not name.
USED_BY_GENERATED = {("proto", "tonic-prost")}


def crates(root):
    manifest = tomllib.loads((root / "Cargo.toml").read_text())
    for member in manifest["workspace"]["members"]:
        yield member, root / member


def unused_dependencies(name, path):
    manifest = tomllib.loads((path / "Cargo.toml").read_text())
    declared = set(manifest.get("dependencies", {})) | set(manifest.get("dev-dependencies", {}))
    text = "\n".join(f.read_text(encoding="utf-8") for f in path.rglob("*.rs"))
    for dep in sorted(declared):
        if (name, dep) in USED_BY_GENERATED:
            continue
        if not re.search(r"\b" + re.escape(dep.replace("-", "_")) + r"\b", text):
            yield dep


def rust_lines(path):
    return sum(1 for _ in path.open(encoding="utf-8"))


def code_lines(path):
    """Lines of code: not blank, not a comment, not in a test module."""
    return sum(1 for line in code_of(path).splitlines() if line.strip())


def folder_cycles(graph):
    """Cycles between folders: each module collapsed to its first `depth`
    path components (its folder at that depth), at every depth."""
    deepest = max((len(m) for m in graph), default=0)
    found = []
    for depth in range(1, deepest):
        folded = {}
        for mod, targets in graph.items():
            a = mod[:depth]
            for t in targets:
                b = t[:depth]
                if a != b:
                    folded.setdefault(a, set()).add(b)
        for comp in cycles(folded):
            found.append(comp)
    return found


def module_of(src, file):
    rel = file.relative_to(src).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return tuple(parts)


PATH = re.compile(r"\b(crate|super)((?:::[A-Za-z_][A-Za-z0-9_]*)+|::\{[^}]*\})")
USE_REL = re.compile(r"^\s*(?:pub(?:\([a-z]+\))?\s+)?use\s+([a-z_][a-z0-9_]*)::")


def code_of(file):
    out = []
    for line in file.read_text(encoding="utf-8").splitlines():
        if line.startswith("#[cfg(test)]"):
            break
        out.append(line.split("//", 1)[0])
    return "\n".join(out)


def resolve(modules, base, names):
    """The deepest existing module along `base + names`."""
    best = None
    path = tuple(base)
    if path in modules:
        best = path
    for n in names:
        path = path + (n,)
        if path in modules:
            best = path
        else:
            break
    return best


def imports(modules, mod, is_dir_module, code):
    targets = set()
    for m in PATH.finditer(code):
        head, rest = m.group(1), m.group(2)
        if rest.startswith("::{"):
            groups = [g.strip() for g in rest[3:-1].split(",") if g.strip()]
            paths = [g.split("::") for g in groups]
        else:
            paths = [rest[2:].split("::")]
        if head == "crate":
            base = ()
        else:
            # `super` of a file module is its parent; of a directory module
            # (`x/mod.rs`) also its parent: both name the enclosing module.
            base = mod[:-1]
            for p in paths:
                while p and p[0] == "super":
                    base = base[:-1]
                    p.pop(0)
        for p in paths:
            p = [x for x in p if re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", x)]
            t = resolve(modules, base, p)
            if t is not None:
                targets.add(t)
    for line in code.splitlines():
        m = USE_REL.match(line)
        if m and m.group(1) not in ("crate", "super", "self", "std", "core"):
            child = mod + (m.group(1),)
            if child in modules:
                targets.add(child)
    targets.discard(mod)
    return targets


def cycles(graph):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    sys.setrecursionlimit(10000)
    for v in list(graph):
        if v not in index:
            visit(v)
    return out


def strip_literals(text):
    """The text with comments, strings and character literals blanked out
    (newlines kept), so that braces and names are those of the code."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif re.match(r'(b?r#*)"', text[i:i + 8]) and (i == 0 or not text[i - 1].isalnum()):
            m = re.match(r'b?r(#*)"', text[i:])
            end = '"' + m.group(1)
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append("\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'":
            m = re.match(r"'(\\.[^']*|[^'\\])'", text[i:])
            if m:
                i += m.end()
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


FN = re.compile(r"^\s*(?:pub(?:\([a-z:]+\))?\s+)?(?:const\s+)?(?:async\s+)?"
                r"(?:unsafe\s+)?(?:extern\s+\S+\s+)?fn\s+(\w+)")


def long_functions(file):
    """(name, first line, lines) of each function over MAX_FN_LINES before
    the file's tests."""
    lines = strip_literals(code_of_raw(file)).split("\n")
    found = []
    for start, line in enumerate(lines):
        m = FN.match(line)
        if not m:
            continue
        depth, opened = 0, False
        for end in range(start, len(lines)):
            for ch in lines[end]:
                if ch == "{":
                    depth, opened = depth + 1, True
                elif ch == "}":
                    depth -= 1
                elif ch == ";" and not opened and depth == 0:
                    break
            else:
                if opened and depth == 0:
                    break
                continue
            break
        length = end - start + 1
        if opened and length > MAX_FN_LINES:
            found.append((m.group(1), start + 1, length))
    return found


def code_of_raw(file):
    """The file up to its tests, comments kept (line numbers stay true)."""
    out = []
    for line in file.read_text(encoding="utf-8").splitlines():
        if line.startswith("#[cfg(test)]"):
            break
        out.append(line)
    return "\n".join(out)


def transport_in_core(path):
    manifest = tomllib.loads((path / "Cargo.toml").read_text())
    for dep in sorted(set(manifest.get("dependencies", {})) & TRANSPORT_CRATES):
        yield f"core depends on {dep}"
    for f in sorted((path / "src").rglob("*.rs")):
        for no, line in enumerate(strip_literals(code_of_raw(f)).split("\n"), 1):
            m = TRANSPORT.search(line)
            if m:
                yield f"{f.relative_to(path.parent)}:{no} names {m.group(0)}: core knows no transport"


def main():
    root = Path(__file__).resolve().parent.parent
    counts = {}
    failed = False
    for name, path in crates(root):
        files = [f for f in path.rglob("*.rs") if "target" not in f.parts]
        if name not in TEST_CRATES:
            counts[name] = sum(code_lines(f) for f in files
                               if not f.name.endswith("_tests.rs"))
        for dep in unused_dependencies(name, path):
            failed = True
            print(f"{name} declares {dep} and never uses it")
        if name in ("core", "domain"):
            for problem in transport_in_core(path):
                failed = True
                print(problem)
        if name not in TEST_CRATES:
            for f in sorted(files):
                for fn, line, length in long_functions(f):
                    failed = True
                    print(f"{f.relative_to(root)}:{line} fn {fn} is {length} lines "
                          f"(at most {MAX_FN_LINES} outside tests)")
        src = path / "src"
        if not src.is_dir():
            continue
        mods = {}
        for f in src.rglob("*.rs"):
            mods[module_of(src, f)] = f
        graph = {}
        for mod, f in mods.items():
            graph[mod] = imports(mods, mod, f.name == "mod.rs", code_of(f))
        for comp in cycles(graph):
            failed = True
            names = sorted("::".join(m) or "(root)" for m in comp)
            print(f"import cycle in {name}: {' <-> '.join(names)}")
        for comp in folder_cycles(graph):
            failed = True
            names = sorted("::".join(m) or "(root)" for m in comp)
            print(f"folder import cycle in {name}: {' <-> '.join(names)}")
    total = sum(counts.values())
    print(f"{'crate':<16}{'code':>8}{'share':>8}   (lines of code outside tests)")
    for name, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        share = n / total
        flag = ""
        if share > MAX_SHARE:
            failed = True
            flag = f"  over {MAX_SHARE:.0%}"
        print(f"{name:<16}{n:>8}{share:>8.1%}{flag}")
    print(f"{'total':<16}{total:>8}")
    if failed:
        sys.exit(1)
    print("layout ok: no import cycles between modules or folders, no crate over "
          f"{MAX_SHARE:.0%} of the code, no function over {MAX_FN_LINES} lines, "
          "no transport in core")


if __name__ == "__main__":
    main()
