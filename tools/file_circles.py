#!/usr/bin/env python3
"""File circles in a Rust crate: files that import each other, directly or
round a loop (issue 29's "Done when": the library crates have none).

Usage: tools/file_circles.py crates/NAME/src [...]
Prints each circle (a strongly connected set of files, with one import per
edge as evidence) and exits 1 if any; exits 0 and prints nothing otherwise.

An import is a path in code (a `use` or an expression) that names an item of
another file's module: `crate::a::b`, `super::x`, `self::m::y`, or a child
module's name. Declaring a child (`mod x;`) is not an import. A path through
a re-export (`pub use inner::Item` in a parent) is followed to the file that
defines the item, so using the crate root's re-exports is not a circle with
the root.
"""
import os
import re
import sys

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def strip_comments_and_strings(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r'r#*"(?:.|\n)*?"#*', '""', text)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    return text


def module_files(src):
    """Module path (tuple) -> file, for every .rs file under src."""
    mods = {}
    for root, _dirs, files in os.walk(src):
        for name in files:
            if not name.endswith(".rs"):
                continue
            full = os.path.join(root, name)
            rel = os.path.relpath(full, src)[:-3].split(os.sep)
            if rel in (["lib"], ["main"]):
                path = ()
            elif rel[-1] == "mod":
                path = tuple(rel[:-1])
            else:
                path = tuple(rel)
            if rel[0] == "bin":
                continue
            mods.setdefault(path, full)
    return mods


def expand_use(body):
    """`a::{b, c::{d, e}}` -> ['a::b', 'a::c::d', 'a::c::e']."""
    body = body.strip()
    m = re.match(r"^(.*?)\{(.*)\}$", body, flags=re.S)
    if not m:
        return [body]
    prefix, inner = m.group(1), m.group(2)
    parts, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    out = []
    for p in parts:
        p = p.strip()
        if not p:
            continue
        if p == "self":
            out.append(prefix.rstrip(":").strip())
        else:
            out.extend(expand_use(prefix + p))
    return out


def inline_modules(code):
    """(start, end, name, is_test) of each inline `mod name { ... }`."""
    out = []
    for m in re.finditer(r"(#\[cfg\(test\)\]\s*)?\bmod\s+(" + IDENT + r")\s*\{", code):
        depth, i = 0, m.end() - 1
        while i < len(code):
            if code[i] == "{":
                depth += 1
            elif code[i] == "}":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        out.append((m.start(), i, m.group(2), bool(m.group(1))))
    return out


def parse(file, text):
    """(paths used with the inline module they sit in, re-exports name ->
    path) of one file. Code under `#[cfg(test)]` inline modules is left out:
    the circles that matter are the product's."""
    code = strip_comments_and_strings(text)
    blocks = inline_modules(code)

    def scope(pos):
        inner = [b for b in blocks if b[0] <= pos <= b[1]]
        if any(b[3] for b in inner):
            return None
        return tuple(b[2] for b in sorted(inner))

    uses, reexports = [], {}
    for m in re.finditer(r"\b(pub(?:\([^)]*\))?\s+)?use\s+([^;]+);", code):
        where = scope(m.start())
        if where is None:
            continue
        for item in expand_use(m.group(2)):
            alias = re.search(r"\s+as\s+(" + IDENT + r")$", item)
            path = re.sub(r"\s+as\s+" + IDENT + "$", "", item).strip()
            if not m.group(1):
                uses.append((path, where))
            # Any `use` at a module's top names the item for paths through
            # that module (`crate::alias::x` after `use other as alias`);
            # only a `pub use` is not itself an import.
            if m.group(1) or not where:
                name = alias.group(1) if alias else path.split("::")[-1]
                reexports[name] = path
    code_wo_use = re.sub(r"\buse\s+[^;]+;", lambda m: " " * len(m.group(0)), code)
    for m in re.finditer(r"\b((?:" + IDENT + r"::)+" + IDENT + r")", code_wo_use):
        where = scope(m.start())
        if where is not None:
            uses.append((m.group(1), where))
    return uses, reexports


def children(mods, here):
    return {p[len(here)] for p in mods if len(p) == len(here) + 1 and p[: len(here)] == here}


def absolute(path, here, mods):
    segs = [s for s in path.replace(" ", "").split("::") if s]
    if not segs:
        return None
    if segs[0] == "crate":
        return tuple(segs[1:])
    if segs[0] in ("self", "super"):
        base = list(here)
        while segs and segs[0] in ("self", "super"):
            if segs[0] == "super":
                if not base:
                    return None
                base.pop()
            segs = segs[1:]
        return tuple(base + segs)
    if segs[0] in children(mods, here):
        return tuple(list(here) + segs)
    return None


def resolve(abs_path, mods, reexports_of, depth=0):
    """The file defining what abs_path names (following re-exports)."""
    for n in range(len(abs_path), -1, -1):
        prefix = abs_path[:n]
        if prefix in mods:
            rest = abs_path[n:]
            if rest and depth < 8:
                origin = reexports_of.get(prefix, {}).get(rest[0])
                if origin:
                    nxt = absolute(origin, prefix, mods)
                    if nxt is None:
                        return None  # another crate's item, by a local name
                    if nxt is not None and nxt != prefix + rest[:1]:
                        return resolve(nxt + rest[1:], mods, reexports_of, depth + 1)
            return prefix
    return None


def circles(src):
    mods = module_files(src)
    parsed = {}
    for path, file in mods.items():
        with open(file, encoding="utf-8") as f:
            parsed[path] = parse(file, f.read())
    reexports_of = {p: r for p, (_u, r) in parsed.items()}
    edges = {p: {} for p in mods}
    for here, (uses, _r) in parsed.items():
        for u, inner in uses:
            a = absolute(u, here + inner, mods)
            if a is None:
                continue
            t = resolve(a, mods, reexports_of)
            if t is None or t == here:
                continue
            # A re-export (`pub use`) is the parent's API, not a use: it is
            # followed above, never an edge.
            edges[here].setdefault(t, u)
    # Tarjan's strongly connected components.
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
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
    for v in mods:
        if v not in index:
            visit(v)
    return mods, edges, out


def main(argv):
    found = False
    for src in argv[1:]:
        mods, edges, comps = circles(src)
        for comp in comps:
            found = True
            names = sorted(os.path.relpath(mods[p], src) for p in comp)
            print(f"{src}: circle of {len(comp)} files: {', '.join(names)}")
            members = set(comp)
            for p in sorted(comp):
                for t, via in sorted(edges[p].items()):
                    if t in members:
                        print(f"  {os.path.relpath(mods[p], src)} -> "
                              f"{os.path.relpath(mods[t], src)}  (via {via})")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
