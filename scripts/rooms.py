#!/usr/bin/env python3
"""The structure check (issue 48): imports in src/ point down the room order, never up.

The room order is the `floor | room | path | owns` table of docs/DESIGN.md (the book includes
that file), read here so the order is written once. Every file under src/ belongs to the room
whose path is the longest prefix of its own. A path the code names (`use crate::...`, an inline
`crate::x::y`, `super::` climbing out of a room, and in `main.rs` `tidebench::...`) is an import
from its file's room to the room of the module it names. The check fails (exit 1) when

- an import runs from a room to one on a higher floor (a smaller floor number);
- a shared leaf (floor `leaf`) imports anything of the crate outside itself;
- a circle of file imports spans more than one room (rooms on one floor may use each other,
  but not in a circle);
- a file under src/ is in no room of the table.

Test code is exempt: `#[cfg(test)]` items, files declared by `#[cfg(test)] mod x;`, and files
named `tests.rs`, `*_tests.rs` or `tests_*.rs`. Known upward imports that another change will
remove are listed in ALLOWED below, each with the issue that removes it; they are reported as
notes, not failures. `--edges` prints the room-to-room import counts instead of checking.

Python 3 standard library only; it reads files and runs nothing.
"""

import os
import re
import sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DESIGN = os.path.join(ROOT, "docs", "DESIGN.md")
SRC = os.path.join(ROOT, "src")

# Upward imports tolerated for now: (importing file, imported module path prefix) -> why.
# Each entry names the issue whose work removes it; remove the entry with the import.
ALLOWED = {
}


# ---------------------------------------------------------------------------------------------
# The room table


def read_rooms(path):
    """[(floor, room, [paths])] from the table whose header is `floor | room | path | owns`.

    floor is an int (1 = top) or "leaf" (usable from any room, imports nothing of the crate).
    """
    rows = []
    in_table = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not in_table:
                if line.startswith("|") and [c.lower() for c in cells[:3]] == ["floor", "room", "path"]:
                    in_table = True
                continue
            if not line.startswith("|"):
                break
            if set(cells[0]) <= set("-: "):
                continue
            paths = [p for p in re.findall(r"`([^`]+)`", cells[2]) if p.startswith("src/")]
            if not paths:
                continue  # a crate of the workspace (crates/): its own build keeps it apart
            floor = "leaf" if cells[0] == "leaf" else int(cells[0])
            rows.append((floor, cells[1], paths))
    if not rows:
        sys.exit(f"rooms.py: no `floor | room | path | owns` table in {path}")
    return rows


# ---------------------------------------------------------------------------------------------
# Rust source without comments, strings and test items (newlines kept, so offsets keep lines)


def strip_code(text):
    out = []
    i, n = 0, len(text)

    def blank(s):
        return "".join(c if c == "\n" else " " for c in s)

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(blank(text[i:j]))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(blank(text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            end = text.find('"' + hashes, i + len(hashes) + 2)
            j = n if end < 0 else end + 1 + len(hashes)
            out.append(blank(text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(blank(text[i:j + 1]))
            i = j + 1
        elif c == "'":
            # A char literal ('a', '\n', '\u{1F600}') or a lifetime ('a); only the former is blanked.
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", text[i:i + 12])
            if m:
                out.append(blank(m.group(0)))
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def item_end(code, i):
    """End of the item starting at i: after its `;` or its closing brace."""
    if re.match(r"\s*(pub(\([^)]*\))?\s+)?use\b", code[i:]):
        return code.index(";", i) + 1
    depth = 0
    n = len(code)
    while i < n:
        c = code[i]
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == ";" and depth == 0:
            return i + 1
        elif c == "{" and depth == 0:
            braces = 0
            while i < n:
                if code[i] == "{":
                    braces += 1
                elif code[i] == "}":
                    braces -= 1
                    if braces == 0:
                        return i + 1
                i += 1
        i += 1
    return n


ATTR = re.compile(r"\s*#\[[^\]]*\]")


def drop_test_items(code):
    """The code with every `#[cfg(test)]` item blanked; and the test modules it declares."""
    test_mods = []
    for m in reversed(list(re.finditer(r"#\[cfg\(test\)\]", code))):
        start = m.start()
        i = m.end()
        while True:
            a = ATTR.match(code, i)
            if not a:
                break
            i = a.end()
        end = item_end(code, i)
        decl = re.match(r"\s*(pub(\([^)]*\))?\s+)?mod\s+(\w+)\s*;", code[i:end])
        if decl:
            test_mods.append(decl.group(3))
        code = code[:start] + "".join(c if c == "\n" else " " for c in code[start:end]) + code[end:]
    return code, test_mods


# ---------------------------------------------------------------------------------------------
# Files, modules and the paths they name


def module_of(rel):
    """src-relative file path -> module path tuple (src/a/mod.rs and src/a.rs -> ("a",))."""
    parts = rel[:-3].split("/")
    if parts[-1] == "mod":
        parts = parts[:-1]
    if parts in (["lib"], ["main"]):
        return ()
    return tuple(parts)


def split_top(s):
    """Split a use-tree list on commas outside braces."""
    parts, depth, cur = [], 0, []
    for c in s:
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def expand_use(tree, prefix=()):
    """`a::{b::c, d}` -> [(a, b, c), (a, d)] (renames and globs dropped)."""
    tree = re.sub(r"\s+", "", tree)
    tree = re.sub(r"as\w+$", "", tree) if "{" not in tree else tree
    m = re.match(r"^((?:\w+::)*)\{(.*)\}$", tree)
    if m:
        head = tuple(s for s in m.group(1).split("::") if s)
        out = []
        for part in split_top(m.group(2)):
            out.extend(expand_use(part, prefix + head))
        return out
    tree = re.sub(r"\bas\b.*$", "", tree)
    segs = tuple(s for s in tree.split("::") if s and s != "*")
    return [prefix + segs]


USE = re.compile(r"\buse\s+([^;]*);")
INLINE = re.compile(r"(?<![\w:])((?:crate|super|tidebench)(?:::\w+)+)")
INLINE_MOD = re.compile(r"\bmod\s+(\w+)\s*\{")


def inline_mods(code):
    """[(start, end, name)] of inline `mod name { ... }` blocks (for `super::` inside them)."""
    spans = []
    for m in INLINE_MOD.finditer(code):
        spans.append((m.start(), item_end(code, m.start()), m.group(1)))
    return spans


def resolve(path, module, in_main, children):
    """A named path -> absolute module path (tuple), or None when it is not the crate's."""
    if not path:
        return None
    head = path[0]
    if head == "crate" or (in_main and head == "tidebench"):
        return path[1:]
    if head == "self":
        return module + path[1:]
    if head == "super":
        base = list(module)
        rest = list(path)
        while rest and rest[0] == "super":
            if not base:
                return None
            base.pop()
            rest.pop(0)
        return tuple(base) + tuple(rest)
    if head in children:
        return module + path
    return None


def scan(rel, text, modules):
    """[(line, shown, absolute path)] of the crate paths a file names outside its test code."""
    module = module_of(rel)
    in_main = rel == "main.rs"
    code, test_mods = drop_test_items(strip_code(text))
    spans = inline_mods(code)
    children = {m[len(module)] for m in modules if len(m) == len(module) + 1 and m[:len(module)] == module}
    found = []

    def line_of(pos):
        return code.count("\n", 0, pos) + 1

    def module_at(pos):
        inner = [name for (s, e, name) in spans if s < pos < e]
        return module + tuple(inner)

    used = []
    for m in USE.finditer(code):
        used.append((m.start(), m.end()))
        for path in expand_use(m.group(1)):
            here = module_at(m.start())
            target = resolve(path, here, in_main, children if here == module else set())
            if target is not None:
                found.append((line_of(m.start()), "::".join(path), target))
    for m in INLINE.finditer(code):
        if any(s <= m.start() < e for s, e in used):
            continue
        path = tuple(m.group(1).split("::"))
        target = resolve(path, module_at(m.start()), in_main, set())
        if target is not None:
            found.append((line_of(m.start()), m.group(1), target))
    return found, test_mods


def is_test_name(name):
    return name in ("tests.rs",) or name.endswith("_tests.rs") or name.startswith("tests_")


def source_files():
    files = []
    for dirpath, _, names in os.walk(SRC):
        for name in names:
            if name.endswith(".rs"):
                files.append(os.path.relpath(os.path.join(dirpath, name), SRC).replace(os.sep, "/"))
    return sorted(files)


# ---------------------------------------------------------------------------------------------
# The check


def room_of_file(rel, rooms):
    best = None
    for floor, room, paths in rooms:
        for p in paths:
            p = p[len("src/"):]
            if rel == p or (p.endswith("/") and rel.startswith(p)):
                if best is None or len(p) > len(best[0]):
                    best = (p, room, floor)
    return best


def sccs(graph):
    """Tarjan's strongly connected components (iterative)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            node, it = work[-1]
            advanced = False
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    advanced = True
                    break
                if nxt in on:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                out.append(comp)
    return out


def crossing_circle(graph, comp, room_file):
    """One shortest circle in `comp` that leaves its first file's room: [a, ..., a]."""
    best = None
    for a in sorted(comp):
        for b in sorted(graph[a] & comp):
            if room_file[a][1] == room_file[b][1]:
                continue
            # Breadth-first from b back to a inside the component.
            back, queue = {b: None}, [b]
            while queue and a not in back:
                nxt = []
                for node in queue:
                    for m in sorted(graph[node] & comp):
                        if m not in back:
                            back[m] = node
                            nxt.append(m)
                queue = nxt
            if a in back:
                path, node = [], a
                while node is not None:
                    path.append(node)
                    node = back[node]
                circle = [a] + path[::-1]
                if best is None or len(circle) < len(best):
                    best = circle
    return best or sorted(comp)


def main(argv):
    rooms = read_rooms(DESIGN)
    files = source_files()
    modules = {module_of(f): f for f in files if f != "main.rs"}
    problems, notes = [], []

    # Test files: by name, or declared under #[cfg(test)] (with their own children).
    scanned, tests = {}, set()
    for rel in files:
        with open(os.path.join(SRC, rel), encoding="utf-8") as f:
            scanned[rel] = scan(rel, f.read(), modules)
    for rel, (_, test_mods) in scanned.items():
        for name in test_mods:
            child = module_of(rel) + (name,)
            for mod, path in modules.items():
                if mod[:len(child)] == child:
                    tests.add(path)
    tests |= {f for f in files if is_test_name(f.rsplit("/", 1)[-1])}

    room_file = {}
    for rel in files:
        if rel in ("lib.rs",):
            continue
        r = room_of_file(rel, rooms)
        if r is None:
            problems.append(f"src/{rel}: in no room of the table in docs/DESIGN.md")
        else:
            room_file[rel] = r

    def file_of(target):
        for k in range(len(target), 0, -1):
            if target[:k] in modules:
                return modules[target[:k]]
        return None

    graph = defaultdict(set)
    edges = defaultdict(int)
    for rel, (found, _) in scanned.items():
        if rel in tests or rel not in room_file:
            continue
        _, room, floor = room_file[rel]
        for line, shown, target in found:
            dest = file_of(target)
            if dest is None or dest == rel or dest not in room_file:
                continue
            _, to_room, to_floor = room_file[dest]
            if to_room == room:
                graph[rel].add(dest)
                continue
            edges[(room, to_room)] += 1
            where = f"src/{rel}:{line}: `{shown}`"
            allowed = next((why for (f, pre), why in ALLOWED.items()
                            if f == rel and "::".join(target).startswith(pre)), None)
            if floor == "leaf":
                msg = f"{where}: the shared leaf `{room}` imports `{to_room}` (a leaf imports nothing of the crate)"
            elif to_floor != "leaf" and to_floor < floor:
                msg = f"{where}: `{room}` (floor {floor}) imports `{to_room}` (floor {to_floor}), a room above it"
            else:
                graph[rel].add(dest)
                continue
            if allowed:
                notes.append(f"{msg} [allowed: {allowed}]")
            else:
                problems.append(msg)
                graph[rel].add(dest)

    if "--edges" in argv:
        for (a, b), count in sorted(edges.items()):
            print(f"{a:>10} -> {b:<10} {count}")
        return 0

    for comp in sccs(graph):
        spanned = sorted({room_file[f][1] for f in comp})
        if len(spanned) > 1:
            circle = " -> ".join(f"src/{f}" for f in crossing_circle(graph, set(comp), room_file))
            problems.append(
                f"a circle of {len(comp)} files spans the rooms {', '.join(spanned)}; one: {circle}"
            )

    for note in notes:
        print(f"note: {note}")
    for p in problems:
        print(f"error: {p}")
    if problems:
        print(f"rooms.py: {len(problems)} problem(s) with the room order of docs/DESIGN.md")
        return 1
    print(f"rooms.py: {len(files)} files, imports point down the rooms of docs/DESIGN.md"
          + (f" ({len(notes)} allowed for now)" if notes else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
