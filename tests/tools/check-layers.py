#!/usr/bin/python3
"""Checks the include arrows of service/ against the declared stage order.

Usage: tests/tools/check-layers.py [ROOT]   (ROOT defaults to the repository)

service/LAYERS lists the stage folders bottom first. A file in folder F may
include headers of F, of folders listed before F, and workloads/proto/ (the
frame format shared with the agent, counted as util). service/main.c may
include anything. Besides the order, the module graph (foo.c and foo.h are
one module; an edge for every quoted include) must have no cycle.

Inside a folder of CALL_CHECKED (kernel/) the files share one internal
header, so includes alone cannot show a circle: there an edge goes from a .c
to the .c that defines a non-static function it calls, and that call graph
must have no cycle either (the folder's files form layers, each calling
only those below it).

Prints one line per violation and exits 1 if there is any, 0 otherwise.
"""
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
CALL_CHECKED = ("kernel",)
# A definition as the project's style writes it: the name at column 0 (or
# after its return type there), the parameters, then "{" alone at column 0.
DEFINITION = re.compile(r"^(?!static\b)[A-Za-z_][^;{}()=#\n]*?\b([A-Za-z_]\w*)\([^;{}]*\)\n\{", re.M)
COMMENT_OR_STRING = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"', re.S)


def read_layers(root):
    lines = (root / "service" / "LAYERS").read_text().splitlines()
    return [l.strip() for l in lines if l.strip() and not l.lstrip().startswith("#")]


def folder_of(rel):
    """'kernel/kbuild.h' -> 'kernel'; 'proto/frame.h' -> 'util'."""
    first = rel.split("/", 1)[0]
    return "util" if first == "proto" else first


def module_of(rel):
    return re.sub(r"\.[ch]$", "", rel)


def find_cycle(graph):
    """Returns one cycle as a list of modules, or None (iterative DFS)."""
    WHITE, GREY, BLACK = 0, 1, 2
    colour = {n: WHITE for n in graph}
    for start in sorted(graph):
        if colour[start] != WHITE:
            continue
        stack = [(start, iter(sorted(graph[start])))]
        path = [start]
        colour[start] = GREY
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                colour[node] = BLACK
                stack.pop()
                path.pop()
                continue
            if nxt not in colour:
                continue
            if colour[nxt] == GREY:
                return path[path.index(nxt):] + [nxt]
            if colour[nxt] == WHITE:
                colour[nxt] = GREY
                stack.append((nxt, iter(sorted(graph[nxt]))))
                path.append(nxt)
    return None


def call_cycles(service):
    """One problem line per folder of CALL_CHECKED whose files call in a circle."""
    problems = []
    for folder in CALL_CHECKED:
        texts = {p.name: COMMENT_OR_STRING.sub(" ", p.read_text(errors="replace"))
                 for p in sorted((service / folder).glob("*.c"))}
        owner = {}
        for name, text in texts.items():
            for fn in DEFINITION.findall(text):
                owner[fn] = name
        if not owner:
            continue
        call = re.compile(r"\b(" + "|".join(map(re.escape, sorted(owner))) + r")\s*\(")
        graph = {name: set() for name in texts}
        for name, text in texts.items():
            for fn in call.findall(text):
                if owner[fn] != name:
                    graph[name].add(owner[fn])
        cycle = find_cycle(graph)
        if cycle:
            problems.append(f"call cycle inside service/{folder}/: " + " -> ".join(cycle))
    return problems


def main(argv):
    if len(argv) > 1 and argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    root = pathlib.Path(argv[1] if len(argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
    service = root / "service"
    layers = read_layers(root)
    rank = {name: i for i, name in enumerate(layers)}
    problems = []
    graph = {}
    for path in sorted(service.rglob("*.[ch]")):
        rel = path.relative_to(service).as_posix()
        if "/" not in rel:
            if rel != "main.c":
                problems.append(f"service/{rel}: only main.c may stay directly in service/")
            continue
        src = folder_of(rel)
        if src not in rank:
            problems.append(f"service/{rel}: folder '{src}' is not declared in service/LAYERS")
            continue
        mod = module_of(rel)
        graph.setdefault(mod, set())
        for inc in INCLUDE.findall(path.read_text(errors="replace")):
            if "/" not in inc:
                problems.append(f"service/{rel}: includes \"{inc}\" without its folder")
                continue
            dst = folder_of(inc)
            if dst not in rank:
                if inc.split("/", 1)[0] == "agent":
                    problems.append(f"service/{rel}: includes the agent's \"{inc}\"")
                continue
            if rank[dst] > rank[src]:
                problems.append(
                    f"service/{rel}: includes \"{inc}\": {src} may not include {dst}, "
                    f"which comes later in service/LAYERS")
            target = module_of(inc)
            if target != mod and inc.split("/", 1)[0] != "proto":
                graph[mod].add(target)
    cycle = find_cycle(graph)
    if cycle:
        problems.append("include cycle: " + " -> ".join(cycle))
    problems += call_cycles(service)
    for p in problems:
        print(p)
    if not problems:
        print(f"layers ok: {len(graph)} modules in {len(layers)} stages")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
