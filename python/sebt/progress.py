"""A progress bar on stderr, drawn only on a terminal and never when CI is
set: what the sebt command draws."""
import os
import sys
import time


def wanted(progress):
    if progress is not None:
        return bool(progress)
    return sys.stderr.isatty() and not os.environ.get("CI")


class Bar:
    def __init__(self, what, unit, total):
        self.what, self.unit, self.total = what, unit, total
        self.start = self.last = time.monotonic()
        self.drawn = False

    def update(self, done):
        now = time.monotonic()
        if now - self.last < 0.1 or now - self.start < 1.0:   # at most 10 redraws a second, none in the first
            return
        self.last = now
        frac = done / self.total if self.total else 1.0
        width = 30
        fill = int(frac * width)
        sys.stderr.write("\r%s [%s%s] %d/%d %s %3.0f%% %.1f s" % (
            self.what, "#" * fill, "." * (width - fill), done, self.total, self.unit, 100 * frac, now - self.start))
        sys.stderr.flush()
        self.drawn = True

    def finish(self):
        if self.drawn:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
