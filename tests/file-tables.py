#!/usr/bin/env python3
"""Checks the two tables that say where things are against the tree.

README.md's "Where things are" names directories; docs/architecture.md's
"Who owns what" names files, with what each one owns.  This fails (exit 1,
one line per problem) when
  - a table names a path that does not exist, or its text names (in
    backquotes) a file that is nowhere in the tree;
  - README.md's table leaves out a top-level directory of the tree;
  - docs/architecture.md's table leaves out a file that it must list: every
    source and header of include/teams/, launcher/ (with launcher/internal/),
    backend/pocl/ and mpi/, and the model launcher/team.pml;
  - a file and its row disagree.  A file's opening comment starts
    "/* <project>: <summary>", and the summary's first clause -- up to the
    first ". ", ",", ";", ":", " (" or " --" -- is its key phrase
    ("/* teams: the steal schedule (one participant's loop)." has "the steal
    schedule").  Every file a row names must have one, and the row's text
    must contain it (case and line breaks aside): change what a file says it
    is, and its row must follow; a row that groups files (`steal.c`,
    `steal.h`) says what each of them is.
And a header's opening comment must agree with the files that include it.
Its list of users is the text after "what" up to "share(s)" (with a
parenthesis right after), after "internal to", "contract between",
"shared by", "used by" or "included by", up to the end of that sentence
(or a ";"); its files are the names in it that end in .c, .cpp or .h.
  - every file the list names includes the header, directly or through
    other headers;
  - every file of the header's own top directory (launcher/, backend/,
    bench/, mpi/, tests/) that includes it is named, or is the header's own
    .c, or is a header whose own includers are all so accounted for (tests
    and tools outside the header's directory include internal headers as
    white-box code and are not listed);
  - a header that lists what "The driver may use" (teams-driver.h) names
    every header of launcher/ that a file of backend/ includes.
A row's first cell holds its paths in backquotes; a name without a slash
after the first is in the first one's directory ("`launcher/steal.c`,
`steal.h`"); a path ending in "/" is a directory.  Before the tree, the
checks run on small broken trees of their own, each of which they must
reject (so a check that cannot fail fails here).
Usage: file-tables.py [REPO_ROOT]
"""
import os
import re
import subprocess
import sys
import tempfile

MUST_LIST = [("include/teams", (".h",)),
             ("launcher", (".c", ".h", ".pml")),
             ("launcher/internal", (".h",)),
             ("backend/pocl", (".c", ".h")),
             ("mpi", (".c", ".h"))]
FILE_NAME = re.compile(r"^[\w.+-]+\.(c|h|cpp|md|pml|sh|py|cmake|in|json|txt)$")
CLAUSE_END = re.compile(r"\.\s|\.$|[,;:]|\s\(|\s--")


def tree_files(root):
    """The tree's files, relative to root: git's list where there is one
    (so build directories do not count), else a walk that skips them."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-co", "--exclude-standard"],
                             capture_output=True, text=True, check=True).stdout
        files = [f for f in out.splitlines() if os.path.isfile(os.path.join(root, f))]
        if files:
            return set(files)
    except (OSError, subprocess.CalledProcessError):
        pass
    files = set()
    for top, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith((".", "build", "Testing"))]
        for n in names:
            files.add(os.path.relpath(os.path.join(top, n), root))
    return files


def table(text, heading):
    """The rows (lists of cells) of the first table under `heading`."""
    rows, on = [], False
    for line in text.splitlines():
        if line.startswith("#"):
            if on:
                break
            on = line.strip("# ").strip() == heading
            continue
        if on and line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not set(cells[0]) <= set("- :"):
                rows.append(cells)
        elif on and rows:
            break
    return rows[1:]  # without the header row


def row_paths(cell):
    """The paths a first cell names, the later ones completed with the first
    one's directory when they have no slash of their own."""
    names = re.findall(r"`([^`]+)`", cell)
    out = []
    for n in names:
        if out and "/" not in n.rstrip("/"):
            base = out[0] if out[0].endswith("/") else os.path.dirname(out[0])
            n = os.path.join(base, n)
        out.append(n)
    return out


def normal(s):
    return " ".join(s.replace("`", "").lower().split())


def key_phrase(path):
    """The first clause of a file's opening comment's summary, or None."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            head = f.read(2000)
    except OSError:
        return None
    m = re.match(r"\s*/\*(.*?)(\*/|$)", head, re.S)
    if not m:
        return None
    text = " ".join(line.strip().lstrip("*").strip() for line in m.group(1).splitlines())
    m = re.match(r"\s*([^\s].{0,40}?): (.*)", text)
    if not m:
        return None
    end = CLAUSE_END.search(m.group(2))
    phrase = m.group(2)[:end.start()] if end else m.group(2)
    return normal(phrase) or None


def check(root):
    problems = []
    files = tree_files(root)
    names = {os.path.basename(f) for f in files}
    dirs = {os.path.dirname(f) for f in files}
    dirs |= {d[:i] for d in dirs for i in range(len(d)) if d[i] == "/"}

    def exists(p):
        p = p.rstrip("/")
        return p in files or p in dirs

    def read(rel):
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            return f.read()

    def rows(doc, heading):
        """The table's rows as (existing paths, text); the paths that do not
        exist and the files the text names that are not in the tree are
        reported here."""
        out = []
        cells_of = table(read(doc), heading)
        if not cells_of:
            problems.append(f"{doc}: no table under \"## {heading}\"")
        for cells in cells_of:
            paths, text = row_paths(cells[0]), " ".join(cells[1:])
            for p in paths:
                if not exists(p):
                    problems.append(f"{doc}: \"{heading}\" names {p}, which does not exist")
            for n in re.findall(r"`([^`]+)`", text):
                if FILE_NAME.match(n) and n not in names:
                    problems.append(f"{doc}: the row of {cells[0]} names `{n}`, which is not in the tree")
            out.append(([p for p in paths if exists(p)], text))
        return out

    # README.md: directories
    listed = {p.rstrip("/") for paths, _ in rows("README.md", "Where things are") for p in paths}
    for top in sorted({f.split("/")[0] for f in files if "/" in f}):
        if not top.startswith(".") and not any(p.split("/")[0] == top for p in listed):
            problems.append(f"README.md: \"Where things are\" leaves out the directory {top}/")

    # docs/architecture.md: files, each with what it owns
    named = set()
    for paths, text in rows("docs/architecture.md", "Who owns what"):
        named.update(paths)
        for p in paths:
            if p.endswith("/") or p.rstrip("/") in dirs:
                continue
            key = key_phrase(os.path.join(root, p))
            if key is None:
                problems.append(f"{p}: no opening comment \"/* <project>: <summary>\" to check its row against")
            elif key not in normal(text):
                problems.append(f"docs/architecture.md: the row of {p} does not say what its opening "
                                f"comment says it is: \"{key}\"")
    for d, exts in MUST_LIST:
        for f in sorted(files):
            if os.path.dirname(f) == d and f.endswith(exts) and f not in named:
                problems.append(f"docs/architecture.md: \"Who owns what\" leaves out {f}")
    return problems + includers(root, files)


USERS = re.compile(r"\bwhat\s((?:(?!\.\s).){0,300}?)\sshares?\b(\s*\([^)]*\))?"
                   r"|\b(?:internal to|contract between|[Ss]hared by|[Uu]sed by|[Ii]ncluded by):?\s"
                   r"((?:(?!\.\s).){0,600}?)(?:\.\s|\.$|;)", re.S)
LISTED = re.compile(r"(?<![\w./-])([\w.-]+/)*([\w-]+\.(?:c|cpp|h))\b")
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)
DRIVER_DIR = "backend/"


def opening_comment(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            head = f.read(6000)
    except OSError:
        return ""
    m = re.match(r"\s*/\*(.*?)\*/", head, re.S)
    if not m:
        return ""
    return " ".join(line.strip().lstrip("*").strip() for line in m.group(1).splitlines())


def includers(root, files):
    """Headers' lists of their users against the #includes (see the top)."""
    problems = []
    code = sorted(f for f in files if f.endswith((".c", ".cpp", ".h")))
    by_name = {}
    for f in code:
        by_name.setdefault(os.path.basename(f), []).append(f)

    def resolve(name, frm):
        """The tree's file an #include names, or None (a system header)."""
        for cand in (os.path.normpath(os.path.join(os.path.dirname(frm), name)),
                     os.path.join("include", name)):
            if cand in files:
                return cand
        found = [f for f in by_name.get(os.path.basename(name), []) if f.endswith(name)]
        return found[0] if len(found) == 1 else None

    direct = {}
    for f in code:
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
            direct[f] = {r for r in (resolve(n, f) for n in INCLUDE.findall(fh.read())) if r}
    users = {}
    for f, hs in direct.items():
        for h in hs:
            users.setdefault(h, set()).add(f)

    def reaches(f, h, seen=None):
        seen = seen if seen is not None else set()
        if f in seen:
            return False
        seen.add(f)
        return h in direct.get(f, ()) or any(reaches(g, h, seen) for g in direct.get(f, ()))

    for h in code:
        if not h.endswith(".h"):
            continue
        text = opening_comment(os.path.join(root, h))
        top = h.split("/")[0] + "/"
        listed = set()
        for m in USERS.finditer(text):
            for part in (m.group(1), m.group(2), m.group(3)):
                for n in LISTED.finditer(part or ""):
                    name = n.group(0)
                    here = os.path.normpath(os.path.join(os.path.dirname(h), name))
                    cands = [here] if here in files else [f for f in by_name.get(
                        os.path.basename(name), []) if f.endswith(name) and f.startswith(top)]
                    if not cands:
                        problems.append(f"{h}: its list of users names {name}, which is not in {top}")
                    listed.update(c for c in cands if c != h)
        if listed:
            for f in sorted(listed):
                if not reaches(f, h):
                    problems.append(f"{h}: its list of users names {f}, which does not include it")
            own = os.path.splitext(h)[0] + ".c"

            def accounted(g, seen):
                if g in listed or g == own:
                    return True
                if not g.endswith(".h") or g in seen:
                    return False
                seen.add(g)
                mine = [u for u in users.get(g, ()) if u.startswith(top)]
                return bool(mine) and all(accounted(u, seen) for u in mine)
            for g in sorted(users.get(h, ())):
                if g.startswith(top) and not accounted(g, set()):
                    problems.append(f"{h}: its list of users leaves out {g}, which includes it")
        m = re.search(r"\bThe driver may use\b(.*?)(?:Everything else|$)", text, re.S)
        if m:
            allowed = {n.group(2) for n in LISTED.finditer(m.group(1))}
            dirs = re.findall(r"\(?([\w/]+/)\)", m.group(1))
            for f in code:
                if not f.startswith(DRIVER_DIR):
                    continue
                for inc in sorted(direct[f]):
                    if inc.startswith(top) and inc != h and os.path.basename(inc) not in allowed \
                            and not any(inc.startswith(d) for d in dirs):
                        problems.append(f"{h}: its list of what the driver may use leaves out "
                                        f"{os.path.basename(inc)}, which {f} includes")
    return problems


def self_test():
    """Each broken tree must be rejected, the sound one accepted."""
    arch = ("# A\n\n## Who owns what\n\n| file | owns |\n| --- | --- |\n"
            "| `launcher/a.c`, `a.h` | the alpha part |\n| `launcher/b.c` | the beta part |\n"
            "| `launcher/internal/d.h` | the driver's part |\n| `backend/pocl/x.c` | the x part |\n"
            "{extra}")
    readme = ("# R\n\n## Where things are\n\n| path | what |\n| --- | --- |\n| `launcher/` | code |\n"
              "| `docs/` | docs |\n| `backend/` | the driver |\n")
    sound = {"README.md": readme, "docs/architecture.md": arch.format(extra=""),
             "launcher/a.c": "/* teams: the alpha part (see a.h). */\n#include \"a.h\"\n",
             "launcher/a.h": "/* teams: the alpha part, declared; used by b.c. */\n",
             "launcher/b.c": "/* teams: the beta part. */\n#include \"a.h\"\n",
             "launcher/internal/d.h": ("/* teams: the driver's part.  The driver may use\n"
                                       " *   - a.h, the alpha part.\n * Everything else is private. */\n"),
             "backend/pocl/x.c": "/* teams: the x part. */\n#include \"d.h\"\n#include \"a.h\"\n"}
    cases = [("sound", {}, 0),
             ("a named file that does not exist",
              {"docs/architecture.md": arch.format(extra="| `launcher/gone.c` | the gone part |\n")}, 1),
             ("a file left out", {"launcher/e.c": "/* teams: the epsilon part. */\n"}, 1),
             ("a row that disagrees with the opening comment",
              {"launcher/a.h": "/* teams: the gamma part. */\n"}, 1),
             ("a file without an opening comment", {"launcher/a.h": "int a;\n"}, 1),
             ("a directory the README leaves out", {"tools/t.c": "int t;\n"}, 1),
             ("text naming a file that is not there",
              {"README.md": readme.replace("| code |", "| code (`old.c`) |")}, 1),
             ("a header's list of users that leaves one out",
              {"launcher/a.h": "/* teams: the alpha part, declared; used by a.c. */\n"}, 1),
             ("a header's list of users that names a file that does not include it",
              {"launcher/b.c": "/* teams: the beta part. */\n"}, 1),
             ("a header's list of users that names a file not in the tree",
              {"launcher/a.h": "/* teams: the alpha part, declared; used by b.c and c.c. */\n"}, 1),
             ("a list of what the driver may use that leaves out a header it includes",
              {"launcher/internal/d.h": "/* teams: the driver's part.  The driver may use\n"
                                        " *   - nothing else.\n */\n"}, 1)]
    failed = []
    for what, change, want in cases:
        with tempfile.TemporaryDirectory() as t:
            for rel, text in {**sound, **change}.items():
                os.makedirs(os.path.dirname(os.path.join(t, rel)) or t, exist_ok=True)
                with open(os.path.join(t, rel), "w", encoding="utf-8") as f:
                    f.write(text)
            got = check(t)
            if (len(got) > 0) != (want > 0):
                failed.append(f"file-tables self-test, {what}: {got or 'no problem found'}")
    return failed


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), ".."))
    problems = self_test() + check(root)
    for p in problems:
        print(p)
    if problems:
        return 1
    print("file-tables: README.md's and docs/architecture.md's tables agree with the tree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
