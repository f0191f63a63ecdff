#!/usr/bin/env python3
"""Checks that the protocol's one text and the code still name the same things.

docs/protocol.md is the numbered protocol; the code cites its items
("protocol 9", "protocol 36-40", "docs/protocol.md item 42") and the page and
the model launcher/team.pml cite code names, files, model configurations and
mutants.  This fails (exit 1, one line per problem) when
  - an item the code cites is not on the page;
  - a name the page cites in backquotes is not in the tree: a file (team.c),
    a function, type, field or test name (a word of the sources), a model
    configuration (a `check NAME` of tests/model-check.sh) or a mutant
    (MUT_* of team.pml);
  - a name the model's comments cite (an identifier with an underscore, or
    tt__*) is neither in the sources nor declared by the model itself.
Usage: protocol-names.py [REPO_ROOT]
"""
import os
import re
import sys

root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(__file__), ".."))
SOURCE_DIRS = ["launcher", "backend", "include", "tests", "tools", "bench", "mpi"]
problems = []
# Names of atomic operations the model's comments use for the code's named
# wrappers (tt_atomic_fetch_or_acq_rel is "fetch_or").
OPERATIONS = {"fetch_add", "fetch_sub", "fetch_or", "futex_wait", "futex_wake"}
# Other projects' names the texts cite (PoCL's, OpenMP's, hwloc's API).
EXTERNAL = ("pocl_", "hwloc_", "omp_", "GOMP_", "kmp_")


def read(rel):
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        return f.read()


def source_files():
    for d in SOURCE_DIRS:
        for top, _, files in os.walk(os.path.join(root, d)):
            for name in files:
                if name.endswith((".c", ".h", ".cpp", ".sh", ".cmake", ".in", ".py", ".pml")):
                    yield os.path.join(top, name)


page = read("docs/protocol.md")
model = read("launcher/team.pml")
checks = read("tests/model-check.sh")

files = {}
words = set()
for path in source_files():
    files.setdefault(os.path.basename(path), []).append(path)
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    if path.endswith((".c", ".h", ".cpp", ".pml")):
        # code, not comments: a name that only a comment still mentions is gone
        text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
        text = re.sub(r"//[^\n]*", " ", text)
    words.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))

word_parts = set(p.upper() for w in words for p in w.split("_") if p)
configs = set(re.findall(r"^\s*check\s+([A-Za-z0-9_-]+)", checks, flags=re.M))
configs.update(re.findall(r'check\s+"?mutant-\$mut"?', checks))
mutants = set(re.findall(r"\bMUT_[A-Z_]+", model))

# ---- the items --------------------------------------------------------------
items = set(int(n) for n in re.findall(r"^(\d+)\. ", page, flags=re.M))
if not items:
    problems.append("docs/protocol.md: no numbered items found")


def cited_numbers(spec):
    out = []
    for part in re.split(r"\s*,\s*", spec):
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if m:
            lo = int(m.group(1))
            hi = int(m.group(2) or lo)
            out.extend(range(lo, hi + 1))
    return out


cite = re.compile(r"(?:docs/protocol\.md items?|protocol) (\d+(?:-\d+)?(?:,\s*\d+(?:-\d+)?)*)")
for path in source_files():
    with open(path, encoding="utf-8", errors="replace") as f:
        for lineno, line in enumerate(f, 1):
            for m in cite.finditer(line):
                for n in cited_numbers(m.group(1)):
                    if n not in items:
                        problems.append("%s:%d cites protocol item %d, which docs/protocol.md lacks"
                                        % (os.path.relpath(path, root), lineno, n))

# ---- names the page cites ------------------------------------------------------
ident = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
for lineno, line in enumerate(page.splitlines(), 1):
    for tok in re.findall(r"`([^`]+)`", line):
        where = "docs/protocol.md:%d" % lineno
        if re.fullmatch(r"[\w./-]+\.(c|h|pml|sh|py|cmake)", tok):
            if "/" in tok and tok.split("/")[0] not in SOURCE_DIRS + ["docs"]:
                continue  # another project's file (Concurrency Kit's src/...)
            base = os.path.basename(tok)
            if base not in files and not os.path.exists(os.path.join(root, tok)):
                problems.append("%s: file `%s` not found" % (where, tok))
        elif tok.startswith("MUT_") and re.fullmatch(r"MUT_[A-Z_]+", tok):
            if tok not in mutants:
                problems.append("%s: mutant `%s` not in launcher/team.pml" % (where, tok))
        elif re.fullmatch(r"[a-z]+(-[a-z0-9]+)+", tok) and re.search(r"\d", tok):
            if tok not in configs and not tok.startswith(("test-", "ways-*")):
                problems.append("%s: model configuration `%s` not in tests/model-check.sh"
                                % (where, tok))
        elif re.fullmatch(r"[A-Za-z_][\w]*((\.|->)[A-Za-z_]\w*)*", tok):
            if tok.startswith(EXTERNAL):
                continue
            for part in re.split(r"\.|->", tok):
                # a single word may name a field of a packed word or a state
                # (`closed` of region.sync is SYNC_CLOSED, `RUNNING` is
                # TT__OWNER_RUNNING): one part of an identifier, in any case
                if part.startswith(EXTERNAL):
                    break
                if part not in words and not ("_" not in part and part.upper() in word_parts):
                    problems.append("%s: `%s` names `%s`, which no source has" % (where, tok, part))
                    break

# ---- names the model's comments cite --------------------------------------------
model_words = set(ident.findall(re.sub(r"/\*.*?\*/", " ", model, flags=re.S)))
for m in re.finditer(r"/\*.*?\*/", model, flags=re.S):
    start = model.count("\n", 0, m.start()) + 1
    for tok in set(re.findall(r"\b(?:tt__\w+|[a-z][a-z0-9]*_[a-z0-9_]+)\b", m.group(0))):
        if tok not in words and tok not in model_words and tok not in OPERATIONS:
            problems.append("launcher/team.pml:%d: comment names `%s`, which neither the "
                            "sources nor the model have" % (start, tok))

for p in problems:
    print(p)
if problems:
    print("protocol-names: %d problem(s)" % len(problems))
    sys.exit(1)
print("protocol-names: %d items, the names of docs/protocol.md and launcher/team.pml found"
      % len(items))
