#!/usr/bin/env python3
"""Checks that the protocol's one text and the code still name the same
things, and that the texts' pointers land where they say.

docs/protocol.md is the numbered protocol; the code cites its items
("protocol 9", "protocol 37-41", "docs/protocol.md item 43") and the page and
the model launcher/team.pml cite code names, files, model configurations and
mutants.  The texts also point at each other's sections (`idle.c`,
"Yielding"; docs/measurements.md, "Idle workers").  This fails (exit 1, one
line per problem) when
  - the page's items are not numbered 1, 2, 3, ... in page order, each
    number once (a list renders its own numbers: a duplicate or a gap would
    make the page and its citations disagree);
  - a text cites an item the page does not have.  A citation is "protocol"
    or "protocol.md" (in backquotes or as a link: "[`docs/protocol.md`](
    protocol.md)") followed, after an optional comma and "item"/"items", by
    numbers and ranges ("9", "37-41", "6, 9, 39"); a bare "item N" or
    "items N-M" (not "work-item N"); and, in docs/protocol.md, team.pml and
    tests/model-check.sh, which cite items by number alone, a parenthesis
    that opens with numbers ("(6, 9)", "(see 16-18)", "(23: ...").  Comment
    leaders and line breaks may fall anywhere inside a citation;
  - a text cites a section that its file lacks.  A section citation is a
    file's name (in backquotes, as a link, or bare, optionally closing a
    parenthesis) followed by a comma and a quoted name -- `lifecycle.c`,
    "Sizing" -- or, for a section of the citing file itself, see "Name".
    The file is the path as written from the root, else beside the citing
    file, else any file of that name in the tree; a file not in the tree is
    another project's and is not checked, unless the path starts with one
    of this tree's directories.  A section of a markdown file is a heading
    ("## Idle workers (`launcher/idle.c`)": its text, or its text before
    " (") or a bold run-in ("- **The hand-off** (...)").  A section of a
    C, Promela, shell or CMake file is a line that, after its comment
    leader (/*, *, //, #), starts with the name followed by ".", ":", " ("
    or the end of the line ("Yielding.  An idle worker ...", "Protocol",
    "Out of memory: ..."), or a banner "---- name ----" whose text starts
    with the name;
  - a name the page cites in backquotes is not in the tree: a file (team.c),
    a function, type, field or test name (a word of the sources), a model
    configuration (a `check NAME` of tests/model-check.sh) or a mutant
    (MUT_* of team.pml);
  - a name the model's comments cite (an identifier with an underscore, or
    tt__*) is neither in the sources nor declared by the model itself.
Before the tree, the checks run on small trees of their own: a sound one,
which they must accept, and broken ones, each of which they must reject
(so a check that cannot fail fails here).
Usage: protocol-names.py [REPO_ROOT]
"""
import os
import re
import subprocess
import sys
import tempfile

SOURCE_DIRS = ["launcher", "backend", "include", "tests", "tools", "bench", "mpi"]
# Names of atomic operations the model's comments use for the code's named
# wrappers (tt_atomic_fetch_or_acq_rel is "fetch_or").
OPERATIONS = {"fetch_add", "fetch_sub", "fetch_or", "futex_wait", "futex_wake"}
# Other projects' names the texts cite (PoCL's, OpenMP's, hwloc's API).
EXTERNAL = ("pocl_", "hwloc_", "omp_", "GOMP_", "kmp_")
# The texts whose pointers are checked, by how their names end.
TEXTS = (".c", ".h", ".cpp", ".md", ".pml", ".sh", ".py", ".cmake", ".in", ".txt")
# Texts that cite items by number alone, in parentheses.
BARE_CITERS = ("docs/protocol.md", "launcher/team.pml", "tests/model-check.sh")
# This script: its examples and self-test trees are not the tree's pointers.
SELF = "tests/protocol-names.py"

SP = r"[\s*/#]+"  # a space, possibly a line break and a comment leader
NUMS = r"\d+(?:\s*[-\u2013]\s*\d+)?(?:,[\s*/#]*\d+(?:\s*[-\u2013]\s*\d+)?)*"
ITEM_CITE = re.compile(
    r"(?:\bprotocol(?:\.md)?`?(?:\]\([^)\s]*\))?(?!'),?" + SP + r"(?:items?" + SP + r")?"
    r"|(?<![\w-])items?" + SP + r")(" + NUMS + r")\b(?![.']\d)")
# not a call's "f(0)", a default's "NAME (4096)" or a value's "(0: none)"
BARE_CITE = re.compile(r"(?<![\w)])(?<![A-Z_\d] )\((?:see )?(?=[1-9])(" + NUMS + r")(?=[);:,])")
SECTION_CITE = re.compile(
    r"(?<![\w./-])([\w./-]*[\w-]\.(?:c|h|cpp|md|pml|sh|py|cmake))`?(?:\]\([^)\s]*\))?\)?,"
    + SP + r"\"([^\"\n]{1,80})\"")
SELF_SECTION_CITE = re.compile(r"\bsee \"([^\"\n]{1,80})\"")


def tree_files(root):
    """The tree's files, relative to root: git's list where there is one
    (so build directories do not count), else a walk that skips them."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-co", "--exclude-standard"],
                             capture_output=True, text=True, check=True).stdout
        files = [f for f in out.splitlines() if os.path.isfile(os.path.join(root, f))]
        if files:
            return sorted(files)
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for top, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith((".", "build", "Testing"))]
        for n in names:
            files.append(os.path.relpath(os.path.join(top, n), root))
    return sorted(files)


def numbers(spec):
    out = []
    for part in re.split(r",[\s*/#]*", spec):
        m = re.fullmatch(r"(\d+)(?:\s*[-\u2013]\s*(\d+))?", part.strip())
        if m:
            lo = int(m.group(1))
            hi = int(m.group(2) or lo)
            out.extend(range(lo, hi + 1) if hi >= lo else [lo, hi])
    return out


def sections(path, text):
    """The names of the sections a file has (see the module's comment):
    a function of a name that says whether the file has it."""
    if path.endswith(".md"):
        heads = []
        for line in text.splitlines():
            m = re.match(r"#+\s+(.*?)\s*#*\s*$", line)
            if m:
                heads.append(m.group(1))
                heads.append(re.split(r" \(", m.group(1))[0])
            m = re.match(r"\s*(?:[-*]\s+)?\*\*([^*]+)\*\*", line)
            if m:
                heads.append(m.group(1).rstrip("."))
        heads = set(heads)
        return lambda name: name in heads
    lines = []
    for line in text.splitlines():
        m = re.match(r"\s*(?:/\*+|\*+(?!/)|//+|#+)\s?(.*)$", line)
        if m:
            lines.append(m.group(1).strip())

    def has(name):
        for body in lines:
            banner = re.match(r"-{3,}\s*(.*?)\s*-{3,}\s*(?:\*/)?$", body)
            if banner and re.match(re.escape(name) + r"(?:$| \(| -)", banner.group(1)):
                return True
            if re.match(re.escape(name) + r"(?:\.|:| \(|\s*$|\s*\*/)", body):
                return True
        return False
    return has


def check(root):
    problems = []
    all_files = tree_files(root)
    by_name = {}
    for f in all_files:
        by_name.setdefault(os.path.basename(f), []).append(f)

    def read(rel):
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            return f.read()

    page = read("docs/protocol.md")
    model = read("launcher/team.pml")
    checks = read("tests/model-check.sh")

    sources = [f for f in all_files if f.split("/")[0] in SOURCE_DIRS and
               f.endswith((".c", ".h", ".cpp", ".sh", ".cmake", ".in", ".py", ".pml"))]
    words = set()
    for rel in sources:
        text = read(rel)
        if rel.endswith((".c", ".h", ".cpp", ".pml")):
            # code, not comments: a name that only a comment still mentions is gone
            text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
            text = re.sub(r"//[^\n]*", " ", text)
        words.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
    word_parts = set(p.upper() for w in words for p in w.split("_") if p)
    configs = set(re.findall(r"^\s*check\s+([A-Za-z0-9_-]+)", checks, flags=re.M))
    configs.update(re.findall(r'check\s+"?mutant-\$mut"?', checks))
    mutants = set(re.findall(r"\bMUT_[A-Z_]+", model))

    # ---- the items: 1, 2, 3, ... in page order, each once -----------------------
    listed = [(int(n), page.count("\n", 0, m.start()) + 1)
              for m in re.finditer(r"^(\d+)\. ", page, flags=re.M) for n in [m.group(1)]]
    items = set(n for n, _ in listed)
    if not listed:
        problems.append("docs/protocol.md: no numbered items found")
    seen = {}
    for i, (n, line) in enumerate(listed):
        if n in seen:
            problems.append("docs/protocol.md:%d: item %d again (first at line %d)" % (line, n, seen[n]))
        elif n != i + 1:
            problems.append("docs/protocol.md:%d: item %d where the page's order makes it %d"
                            % (line, n, i + 1))
        seen.setdefault(n, line)

    # ---- citations of items and of sections -------------------------------------
    section_cache = {}

    def has_section(rel, name):
        if rel not in section_cache:
            section_cache[rel] = sections(rel, read(rel))
        return section_cache[rel](name)

    def resolve(ref, citing):
        """The tree's files a reference may name (empty: not in the tree)."""
        here = os.path.dirname(citing)
        for cand in (ref, os.path.normpath(os.path.join(here, ref))):
            if cand in by_name.get(os.path.basename(cand), []):
                return [cand]
        if "/" not in ref:
            return by_name.get(ref, [])
        return [f for f in by_name.get(os.path.basename(ref), []) if f.endswith("/" + ref)]

    for rel in all_files:
        if not rel.endswith(TEXTS) and os.path.basename(rel) != "CMakeLists.txt":
            continue
        if rel == SELF:
            continue
        text = read(rel)

        def where(pos):
            return "%s:%d" % (rel, text.count("\n", 0, pos) + 1)

        cites = list(ITEM_CITE.finditer(text))
        if rel in BARE_CITERS:
            cites += list(BARE_CITE.finditer(text))
        for m in cites:
            for n in numbers(m.group(1)):
                if n not in items:
                    problems.append("%s: cites protocol item %d, which docs/protocol.md lacks"
                                    % (where(m.start()), n))
        for m in SECTION_CITE.finditer(text):
            ref, name = m.group(1), m.group(2)
            targets = resolve(ref, rel)
            if not targets:
                if "/" in ref and ref.split("/")[0] in SOURCE_DIRS + ["docs"]:
                    problems.append('%s: cites %s, "%s": no such file' % (where(m.start()), ref, name))
                continue
            if not any(has_section(t, name) for t in targets):
                problems.append('%s: cites %s, "%s": %s has no such section'
                                % (where(m.start()), ref, name, " or ".join(targets)))
        for m in SELF_SECTION_CITE.finditer(text):
            if not has_section(rel, m.group(1)):
                problems.append('%s: says see "%s", a section this file lacks'
                                % (where(m.start()), m.group(1)))

    # ---- names the page cites ------------------------------------------------------
    for lineno, line in enumerate(page.splitlines(), 1):
        for tok in re.findall(r"`([^`]+)`", line):
            where = "docs/protocol.md:%d" % lineno
            if re.fullmatch(r"[\w./-]+\.(c|h|pml|sh|py|cmake)", tok):
                if "/" in tok and tok.split("/")[0] not in SOURCE_DIRS + ["docs"]:
                    continue  # another project's file (Concurrency Kit's src/...)
                if os.path.basename(tok) not in by_name and tok not in all_files:
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
    ident = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
    model_words = set(ident.findall(re.sub(r"/\*.*?\*/", " ", model, flags=re.S)))
    for m in re.finditer(r"/\*.*?\*/", model, flags=re.S):
        start = model.count("\n", 0, m.start()) + 1
        for tok in set(re.findall(r"\b(?:tt__\w+|[a-z][a-z0-9]*_[a-z0-9_]+)\b", m.group(0))):
            if tok not in words and tok not in model_words and tok not in OPERATIONS:
                problems.append("launcher/team.pml:%d: comment names `%s`, which neither the "
                                "sources nor the model have" % (start, tok))
    return problems, len(items)


def self_test():
    """Each broken tree must be rejected, the sound one accepted."""
    page = ("# P\n\n## One\n\n1. `a.owner` is the holder's.\n   Kept in: `a.c`, `take`.\n"
            "2. The release (1) follows the take.\n{extra}\n## Two (`launcher/a.c`)\n\n"
            "3. The last item (see 1-2).\n")
    code = ("/* teams: a.\n *\n * Yielding.  Why it yields (protocol 1, 2; docs/protocol.md\n"
            " * item 3).\n *\n * Out of memory: nothing stops.\n */\n"
            "/* ---- the monitor (see \"Yielding\") ---- */\n"
            "struct a { int owner; };\nvoid take(void);\n")
    sound = {"docs/protocol.md": page.format(extra=""),
             "docs/notes.md": "# N\n\n## Idle workers (`launcher/a.c`)\n\n- **The hand-off** (x): y\n",
             "launcher/team.pml": "/* the model of items 1-3 */\nint x;\n",
             "tests/model-check.sh": "check sleep-2w-2h\n",
             "launcher/a.c": code,
             "launcher/b.h": ('/* teams: b (a.c, "Yielding"; `a.c`, "Out of memory"; the rule\n'
                              ' * docs/notes.md, "Idle workers"; [`notes.md`](../docs/notes.md),\n'
                              ' * "The hand-off"; `launcher/a.c`, "the monitor"). */\n')}
    cases = [("sound", {}),
             ("a duplicate item number",
              {"docs/protocol.md": page.format(extra="2. A second item 2.\n")}),
             ("items out of order",
              {"docs/protocol.md": page.format(extra="").replace("2. The", "9. The").replace(
                  "3. The", "2. The").replace("9. The", "3. The")}),
             ("a citation of an item the page lacks",
              {"launcher/b.h": "/* teams: b (protocol 2, 7). */\n"}),
             ("a cited range past the page",
              {"docs/notes.md": sound["docs/notes.md"] + "[`docs/protocol.md`](protocol.md) items 2-4.\n"}),
             ("a citation across a comment's line break",
              {"launcher/b.h": "/* teams: b (docs/protocol.md\n * item 9). */\n"}),
             ("a bare item citation",
              {"launcher/b.h": "/* teams: b (item 5). */\n"}),
             ("an item number alone in the page",
              {"docs/protocol.md": page.format(extra="").replace("(see 1-2)", "(see 1-4)")}),
             ("a section a C file lacks",
              {"launcher/b.h": '/* teams: b (a.c, "Constants"). */\n'}),
             ("a section a markdown file lacks",
              {"launcher/b.h": '/* teams: b (docs/notes.md,\n * "Busy workers"). */\n'}),
             ("a sentence taken for a section",
              {"launcher/b.h": '/* teams: b (a.c, "Why it"). */\n'}),
             ("a section of the citing file it lacks",
              {"launcher/a.c": code.replace('(see "Yielding")', '(see "Sizing")')}),
             ("a cited file of this tree that is gone",
              {"launcher/b.h": '/* teams: b (launcher/gone.c, "Yielding"). */\n'})]
    failed = []
    for what, change in cases:
        with tempfile.TemporaryDirectory() as t:
            for rel, text in {**sound, **change}.items():
                os.makedirs(os.path.dirname(os.path.join(t, rel)), exist_ok=True)
                with open(os.path.join(t, rel), "w", encoding="utf-8") as f:
                    f.write(text)
            got, _ = check(t)
            if (len(got) > 0) != (what != "sound"):
                failed.append("protocol-names self-test, %s: %s" % (what, got or "no problem found"))
    return failed


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), ".."))
    failed = self_test()
    problems, n = check(root)
    problems = failed + problems
    for p in problems:
        print(p)
    if problems:
        print("protocol-names: %d problem(s)" % len(problems))
        return 1
    print("protocol-names: %d items, each once; the names of docs/protocol.md and "
          "launcher/team.pml found; every cited item and section found" % n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
