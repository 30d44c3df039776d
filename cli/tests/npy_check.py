"""npy_check.py SWEEP.npy SWEEP.csv: numpy.load (and pandas.DataFrame of it,
when pandas is installed) reads the npy of `sebt sweep --format npy` with the
CSV's columns and, column by column, the CSV's values bit for bit (the CSV
read by Python's own correctly rounded float(), independently of sebt).
Exit 0 when equal, 1 with the first difference named."""
import csv
import sys

import numpy as np

npy_path, csv_path = sys.argv[1], sys.argv[2]
a = np.load(npy_path)   # no allow_pickle: a plain structured array
with open(csv_path, newline="") as f:
    rows = list(csv.reader(f))
header, rows = rows[0], rows[1:]
bad = []
if list(a.dtype.names) != header:
    bad.append("columns %s, CSV has %s" % (a.dtype.names, header))
if a.shape != (len(rows),):
    bad.append("shape %s, CSV has %d rows" % (a.shape, len(rows)))
if a.dtype.byteorder not in "=<|" or any(a.dtype[n].byteorder == ">" for n in a.dtype.names):
    bad.append("not little-endian: %s" % a.dtype)
for c, name in enumerate(header):
    if bad:
        break
    col = a[name]
    text = [r[c] for r in rows]
    kind = a.dtype[name].kind
    if kind == "f":
        want = np.array([float(t) for t in text], dtype="<f8")
        got = col.astype("<f8")
        # NaN is one value in the CSV ("nan"); compare the rest bit for bit.
        wn, gn = np.isnan(want), np.isnan(got)
        if not np.array_equal(wn, gn) or not np.array_equal(want[~wn].view("<u8"), got[~gn].view("<u8")):
            i = int(np.flatnonzero((wn != gn) | ((want.view("<u8") != got.view("<u8")) & ~wn))[0])
            bad.append("%s row %d: npy %r, CSV %r" % (name, i, got[i], text[i]))
    elif kind == "b":
        want = np.array([{"true": True, "false": False}[t] for t in text])
        if not np.array_equal(col, want):
            bad.append("%s: flags differ" % name)
    else:
        want = np.array([int(t) for t in text], dtype=object)
        if not all(int(x) == y for x, y in zip(col.tolist(), want)):
            bad.append("%s: whole numbers differ" % name)
try:
    import pandas as pd
except ImportError:
    pd = None
if pd is not None and not bad:
    df = pd.DataFrame(np.load(npy_path))
    if list(df.columns) != header or len(df) != len(rows):
        bad.append("pandas: columns %s, %d rows" % (list(df.columns), len(df)))
    else:
        for name in header:
            s = df[name].to_numpy()
            if s.dtype.kind == "f":
                eq = np.array_equal(np.isnan(s), np.isnan(a[name])) and np.array_equal(
                    s[~np.isnan(s)].view("<u8"), a[name][~np.isnan(a[name])].astype("<f8").view("<u8"))
            else:
                eq = np.array_equal(s, a[name])
            if not eq:
                bad.append("pandas: column %s differs from numpy's" % name)
                break
for b in bad:
    print("npy_check: " + b)
print("npy_check: %s rows x %d columns, %d bytes a row (%s), %s" % (
    len(rows), len(header), a.dtype.itemsize, "numpy %s" % np.__version__,
    "pandas %s checked" % pd.__version__ if pd is not None else "pandas not installed: not checked"))
sys.exit(1 if bad else 0)
