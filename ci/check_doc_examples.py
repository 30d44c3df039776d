#!/usr/bin/env python3
"""Runs the examples of a documentation page and checks that their output
is what the page shows, so the page cannot drift from what sebt does.

    check_doc_examples.py PAGE SEBT ROOT [--python[=PACKAGE_DIR]] [--show]

- Every console block (a fence opened with ```console) is a list of
  commands, each a line `$ sebt ...` or `$ cat FILE` (a trailing backslash
  continues it), followed by the output the page shows. Each command is run
  (sebt is SEBT, this build's command) in a scratch folder where ROOT's
  fixtures/, docs/ and bench/ are visible; it must exit 0 and its stdout
  must hold the shown lines in order, the lines between two `...` lines
  next to each other (spaces at a line's end do not count). A `sebt plot`
  command is passed over, said so, where gnuplot is not installed.
- With --python, the page's `>>>` examples then run as one doctest
  (ELLIPSIS, NORMALIZE_WHITESPACE) in the same folder, after the commands,
  so they can read what the commands wrote; the package is found in
  PACKAGE_DIR (a build's python/ folder), else on PYTHONPATH. Exit 77
  (skipped) without numpy, pandas or the package.
- --show prints each command's output instead of checking it (for writing
  the page).

Exit 0 when everything agrees, 1 naming the first difference, 2 on usage,
77 skipped."""
import doctest
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

LINKED = ("fixtures", "docs", "bench")


def console_blocks(text):
    """[(line number, [lines])] of each ```console block."""
    blocks, cur, start = [], None, 0
    for no, line in enumerate(text.splitlines(), 1):
        if cur is None:
            if line.strip() == "```console":
                cur, start = [], no + 1
        elif line.strip().startswith("```"):
            blocks.append((start, cur))
            cur = None
        else:
            cur.append(line)
    return blocks


def commands(start, lines):
    """[(line number, argv, [shown output lines])] of one block."""
    out, i = [], 0
    while i < len(lines):
        if not lines[i].startswith("$ "):
            raise SystemExit("line %d: output before any command: %r" % (start + i, lines[i]))
        no, cmd = start + i, lines[i][2:]
        while cmd.endswith("\\"):
            i += 1
            cmd = cmd[:-1] + " " + lines[i].strip()
        i += 1
        shown = []
        while i < len(lines) and not lines[i].startswith("$ "):
            shown.append(lines[i].rstrip())
            i += 1
        out.append((no, shlex.split(cmd), shown))
    return out


def shown_in(shown, got):
    """Whether each run of shown lines (split at `...`) stands in got, in
    order; returns the first run not found, or None."""
    runs, cur = [], []
    for line in shown:
        if line.strip() == "...":
            runs.append(cur)
            cur = []
        else:
            cur.append(line)
    runs.append(cur)
    at = 0
    for run in runs:
        if not run:
            continue
        for k in range(at, len(got) - len(run) + 1):
            if got[k:k + len(run)] == run:
                at = k + len(run)
                break
        else:
            return run
    return None


def run_commands(page, sebt, work, show):
    with open(page, encoding="utf-8") as f:
        text = f.read()
    gnuplot = shutil.which(os.environ.get("SEBT_GNUPLOT") or "gnuplot")   # as sebt looks for it
    ran = 0
    for start, lines in console_blocks(text):
        for no, argv, shown in commands(start, lines):
            where = "%s:%d: %s" % (page, no, " ".join(argv))
            if argv[0] not in ("sebt", "cat"):
                raise SystemExit("%s: only sebt and cat commands are run" % where)
            if argv[:2] == ["sebt", "plot"] and not gnuplot:
                print("passed over (no gnuplot): %s" % where)
                continue
            exe = [sebt] if argv[0] == "sebt" else ["cat"]
            p = subprocess.run(exe + argv[1:], cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               universal_newlines=True)
            if p.returncode != 0:
                print("FAIL %s: exit %d\n%s" % (where, p.returncode, p.stderr))
                return 1
            got = [line.rstrip() for line in p.stdout.splitlines()]
            if show:
                print("%s\n%s" % (where, p.stdout))
                continue
            missing = shown_in(shown, got)
            if missing is not None:
                print("FAIL %s: the page shows\n  %s\nwhich its output does not hold:\n%s" %
                      (where, "\n  ".join(missing), p.stdout))
                return 1
            ran += 1
    if ran == 0 and not show:
        print("FAIL %s: no command was checked" % page)
        return 1
    print("ok: %d commands of %s give the output it shows" % (ran, page))
    return 0


def matcher_self_test():
    """The comparison can fail: shown lines apart in the output, a line
    the output lacks, lines out of order."""
    got = ["a", "b", "c"]
    assert shown_in(["a", "b", "c"], got) is None
    assert shown_in(["a", "...", "c"], got) is None
    assert shown_in(["a", "c"], got) == ["a", "c"]
    assert shown_in(["c", "...", "a"], got) == ["a"]
    assert shown_in(["x"], got) == ["x"]


def python_missing():
    """Why the Python examples cannot run here, or None."""
    try:
        import numpy  # noqa: F401
        import pandas  # noqa: F401
        import sebt  # noqa: F401
    except ImportError as e:
        return "%s (apt-get install python3-numpy python3-pandas; the package: PYTHONPATH=BUILD/python)" % e
    return None


def run_python(page, work):
    with open(page, encoding="utf-8") as f:
        text = f.read()
    # A fence line ends an example's output as a blank line would (same
    # line numbers, so a failure names the page's line).
    text = "\n".join("" if line.lstrip().startswith("```") else line for line in text.splitlines())
    test = doctest.DocTestParser().get_doctest(text, {}, os.path.basename(page), page, 0)
    if not test.examples:
        print("FAIL %s: no >>> examples" % page)
        return 1
    here = os.getcwd()
    os.chdir(work)
    try:
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        runner.run(test)
    finally:
        os.chdir(here)
    r = runner.summarize(verbose=False)
    if r.failed:
        print("FAIL %s: %d of %d Python examples differ from the page" % (page, r.failed, r.attempted))
        return 1
    print("ok: %d Python examples of %s give the output it shows" % (r.attempted, page))
    return 0


def main(argv):
    flags = [a for a in argv if a.startswith("--")]
    args = [a for a in argv if not a.startswith("--")]
    package = [a.split("=", 1)[1] for a in flags if a.startswith("--python=")]
    flags = ["--python" if a.startswith("--python=") else a for a in flags]
    if len(args) != 3 or set(flags) - {"--python", "--show"}:
        print(__doc__, file=sys.stderr)
        return 2
    if package:
        sys.path.insert(0, os.path.abspath(package[0]))
    page, sebt, root = (os.path.abspath(a) for a in args)
    if "--python" in flags and python_missing():
        print("SKIP: %s" % python_missing())
        return 77
    matcher_self_test()
    os.environ.setdefault("OMP_NUM_THREADS", "2")
    os.environ["CI"] = "1"   # no progress bars
    with tempfile.TemporaryDirectory() as work:
        for name in LINKED:
            os.symlink(os.path.join(root, name), os.path.join(work, name))
        rc = run_commands(page, sebt, work, "--show" in flags)
        if rc == 0 and "--python" in flags:
            rc = run_python(page, work)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
