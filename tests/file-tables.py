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
    return problems


def self_test():
    """Each broken tree must be rejected, the sound one accepted."""
    arch = ("# A\n\n## Who owns what\n\n| file | owns |\n| --- | --- |\n"
            "| `launcher/a.c`, `a.h` | the alpha part |\n{extra}")
    readme = "# R\n\n## Where things are\n\n| path | what |\n| --- | --- |\n| `launcher/` | code |\n| `docs/` | docs |\n"
    sound = {"README.md": readme, "docs/architecture.md": arch.format(extra=""),
             "launcher/a.c": "/* teams: the alpha part (see a.h). */\n",
             "launcher/a.h": "/* teams: the alpha part, declared. */\n"}
    cases = [("sound", {}, 0),
             ("a named file that does not exist",
              {"docs/architecture.md": arch.format(extra="| `launcher/gone.c` | the gone part |\n")}, 1),
             ("a file left out", {"launcher/b.c": "/* teams: the beta part. */\n"}, 1),
             ("a row that disagrees with the opening comment",
              {"launcher/a.h": "/* teams: the gamma part. */\n"}, 1),
             ("a file without an opening comment", {"launcher/a.h": "int a;\n"}, 1),
             ("a directory the README leaves out", {"tools/t.c": "int t;\n"}, 1),
             ("text naming a file that is not there",
              {"README.md": readme.replace("| code |", "| code (`old.c`) |")}, 1)]
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
