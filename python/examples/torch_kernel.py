#!/usr/bin/python3
"""A torch kernel in the style of the GPU pipeline sebt replaces: a batch of
combos at once as tensors, indicators vectorised over bars (one tensor op
per window offset, so every window is still summed oldest first), the
position walk stepped bar by bar for all combos together (passing over the
bars where every combo is flat and none has its signal).

    sebt validate --backend 'exec:python3 python/examples/torch_kernel.py'            # float64
    sebt validate --backend 'exec:python3 python/examples/torch_kernel.py --float32'  # float32 columns

float64 (default) keeps SPEC §3's order of operations and declares the
exact contract. --float32 holds the indicator columns in float32, as a GPU
kernel that halves its memory traffic does (computed in float64, stored
rounded to float32; prices and the walk stay float64), and declares
tolerant(1e-4): float32 rounding moves a column by 2^-24 relative, and a
stop (low minus a multiple of ATR) and the pnl after it by up to ATR x mult
x 2^-24; sebt adjudicates the near-ties this makes and reports them.

Runs on a CUDA device when torch has one (--device cuda, or the default
when torch.cuda.is_available()); --device cpu forces the CPU.
"""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import numpy as np  # noqa: E402

import sebt_kernel as sk  # noqa: E402

try:
    import torch
except ImportError as e:
    print("torch_kernel: torch is not importable by %s (%s); apt-get install python3-torch" % (sys.executable, e),
          file=sys.stderr)
    sys.exit(2)

FLOAT32 = "--float32" in sys.argv[1:]
STORE = torch.float32 if FLOAT32 else torch.float64
F64 = torch.float64
if "--device" in sys.argv[1:]:
    DEV = torch.device(sys.argv[sys.argv.index("--device") + 1])
else:
    DEV = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.set_num_threads(1)    # sebt runs the fuzz on one thread; the batch is the parallelism


def stored(x):
    """A column as the kernel holds it: rounded to float32 in --float32."""
    return x.to(STORE).to(F64)


def stored_price(x, scale):
    """A price-valued column (EMA, TR, ATR) held relative to a power of two
    near the series' largest close, as a float32 pipeline normalises its
    inputs: scaling by 2^k is exact, and prices of 1e120 or 1e-310, which a
    float cannot hold, keep float32's 24 bits instead of becoming inf or 0."""
    return stored(x / scale) * scale if FLOAT32 else x


class Indicators:
    """The indicator tensors of one series, computed once per distinct
    window or span and kept while the series stays the same."""

    def __init__(self, s):
        self.s = s
        t = lambda a: torch.from_numpy(np.ascontiguousarray(a)).to(DEV, F64)  # noqa: E731
        self.o, self.h, self.l, self.c, self.v = t(s.open), t(s.high), t(s.low), t(s.close), t(s.volume)
        self.n = s.n
        self.missing = torch.isnan(self.c)
        finite = np.abs(np.asarray(s.close, dtype=np.float64))
        finite = finite[np.isfinite(finite)]
        top = float(finite.max()) if finite.size else 0.0
        self.scale = math.ldexp(1.0, math.frexp(top)[1] - 1) if top > 0.0 else 1.0
        self._ema, self._atr, self._z, self._vz, self._rsi = {}, {}, {}, {}, {}
        self.tr = self._true_range()
        hl = self.h - self.l
        cloc = (self.c - self.l) / hl
        self.cloc = stored(torch.where(hl == 0, torch.full_like(cloc, float("nan")), cloc))

    def _true_range(self):
        hl = self.h - self.l
        tr = hl.clone()
        if self.n > 1:
            pc = self.c[:-1]
            alt = torch.maximum(torch.maximum(hl[1:], (self.h[1:] - pc).abs()), (self.l[1:] - pc).abs())
            tr[1:] = torch.where(torch.isnan(pc), hl[1:], alt)
        return tr

    def ema(self, spans):
        """EMA of close for several spans at once: one step per bar, a tensor
        over the spans (SPEC §3: y = a*close + b*y at each present bar)."""
        todo = sorted({s for s in spans if s not in self._ema})
        if todo:
            a = torch.tensor([2.0 / (s + 1) for s in todo], dtype=F64, device=DEV)
            b = 1.0 - a
            out = torch.full((len(todo), self.n), float("nan"), dtype=F64, device=DEV)
            y = None
            closes = self.c.tolist()
            for t, ct in enumerate(closes):
                if ct != ct:
                    continue
                y = torch.full_like(a, ct) if y is None else a * ct + b * y
                out[:, t] = y
            for k, s in enumerate(todo):
                self._ema[s] = stored_price(out[k], self.scale)
        return torch.stack([self._ema[s] for s in spans]) if spans else None

    @staticmethod
    def window_sum(x, w):
        n = x.shape[0]
        acc = x[0:n - w + 1].clone()
        for k in range(1, w):
            acc += x[k:n - w + 1 + k]
        return acc

    def atr(self, w):
        if w not in self._atr:
            out = torch.full((self.n,), float("nan"), dtype=F64, device=DEV)
            if self.n >= w:
                out[w - 1:] = self.window_sum(self.tr, w) / w
            self._atr[w] = out          # full precision: tr_z is computed from it
        return self._atr[w]

    def zscore(self, x, w):
        n = x.shape[0]
        out = torch.full((n,), float("nan"), dtype=F64, device=DEV)
        if n < w:
            return out
        m = self.window_sum(x, w) / w
        ss = torch.zeros(n - w + 1, dtype=F64, device=DEV)
        lo = x[0:n - w + 1].clone()
        hi = lo.clone()
        for k in range(w):
            xk = x[k:n - w + 1 + k]
            d = xk - m
            ss += d * d
            lo = torch.minimum(lo, xk)
            hi = torch.maximum(hi, xk)
        var = ss / w
        z = (x[w - 1:] - m) / torch.sqrt(var)
        bad = torch.isnan(m) | (lo == hi) | (var == 0.0)
        out[w - 1:] = torch.where(bad, torch.full_like(z, float("nan")), z)
        return out

    def rsi(self, w):
        """SPEC §3's RSI(w): gains and losses against the bar before (NaN at
        bar 0 and where either bar is missing), each window's means summed
        oldest first; NaN where a window holds a NaN or nothing moved."""
        if w not in self._rsi:
            nan = float("nan")
            gain = torch.full((self.n,), nan, dtype=F64, device=DEV)
            loss = torch.full((self.n,), nan, dtype=F64, device=DEV)
            if self.n > 1:
                d = self.c[1:] - self.c[:-1]
                zero = torch.zeros_like(d)
                gain[1:] = torch.where(torch.isnan(d), d, torch.where(d > 0, d, zero))
                loss[1:] = torch.where(torch.isnan(d), d, torch.where(d < 0, -d, zero))
            out = torch.full((self.n,), nan, dtype=F64, device=DEV)
            if self.n >= w:
                g = self.window_sum(gain, w) / w
                lo = self.window_sum(loss, w) / w
                r = (100.0 * g) / (g + lo)
                out[w - 1:] = torch.where(torch.isnan(g) | (g + lo == 0.0), torch.full_like(r, nan), r)
            self._rsi[w] = stored(out)
        return self._rsi[w]

    def vol_z(self, w):
        if w not in self._vz:
            self._vz[w] = stored(self.zscore(self.v, w))
        return self._vz[w]

    def tr_z(self, aw, zw):
        if (aw, zw) not in self._z:
            self._z[(aw, zw)] = stored(self.zscore(self.atr(aw), zw))
        return self._z[(aw, zw)]


_cache = {"series": None, "ind": None}


def indicators(series):
    if _cache["series"] is not series:
        _cache["series"], _cache["ind"] = series, Indicators(series)
    return _cache["ind"]


def columns(ind, combos):
    """(C, n) tensors of the batch: ema_f, ema_s, atr (as stored), vol_z,
    tr_z, rsi, signal, valid."""
    ef = ind.ema([int(x) for x in combos.ema_fast])
    es = ind.ema([int(x) for x in combos.ema_slow])
    atr = torch.stack([ind.atr(int(w)) for w in combos.atr_window])
    vz = torch.stack([ind.vol_z(int(w)) for w in combos.z_window])
    tz = torch.stack([ind.tr_z(int(a), int(w)) for a, w in zip(combos.atr_window, combos.z_window)])
    thr = lambda a: torch.tensor(np.asarray(a, dtype=np.float64), device=DEV)[:, None]  # noqa: E731
    rsi = torch.stack([ind.rsi(int(w)) for w in combos.rsi_window])
    sig = (ef < es) & (vz > thr(combos.vol_z)) & (tz > thr(combos.tr_z)) & (ind.cloc[None, :] > thr(combos.cloc_min))
    # the RSI term where a combo turns it on: rsi <= rsi_max (NaN is false)
    use_rsi = torch.tensor(np.asarray(combos.use_rsi, dtype=bool), device=DEV)[:, None]
    sig = sig & (~use_rsi | (rsi <= thr(combos.rsi_max)))
    valid = ~torch.isnan(atr)
    return ef, es, stored_price(atr, ind.scale), vz, tz, rsi, sig, valid


def features(series, p):
    ind = indicators(series)
    one = sk.Combos(np.array([[p[name] for name, _ in sk.PARAMS]], dtype=np.float64))
    ef, es, atr, vz, tz, rsi, sig, valid = columns(ind, one)
    cols = [ef[0], es[0], stored_price(ind.tr, ind.scale), atr[0], vz[0], tz[0], ind.cloc, rsi[0], sig[0], valid[0]]
    return [c.to("cpu", F64).numpy() for c in cols]


def run(series, combos, want_trades):
    """SPEC §6 for every combo at once: state tensors over the combos, one
    step per bar; a combo moves only on its own valid bars."""
    ind = indicators(series)
    C, n = combos.n, series.n
    ef, es, atr, vz, tz, _, sig, valid = columns(ind, combos)
    col = lambda a, dt=F64: torch.tensor(np.asarray(a), dtype=dt, device=DEV)  # noqa: E731
    use_stop, use_tp, use_time = col(combos.use_stop, torch.bool), col(combos.use_tp, torch.bool), col(combos.use_time, torch.bool)
    mult, reward, max_hold = col(combos.atr_stop_mult), col(combos.reward_r), col(combos.max_hold, torch.int64)
    cost_bp = col(combos.fee_bp) + col(combos.slippage_bp)
    zero = torch.zeros(C, dtype=F64, device=DEV)
    in_pos = torch.zeros(C, dtype=torch.bool, device=DEV)
    pending = torch.zeros_like(in_pos)
    entry, stop, tp, risk = zero.clone(), zero.clone(), zero.clone(), zero.clone()
    sig_low, sig_atr = zero.clone(), zero.clone()
    bars = torch.zeros(C, dtype=torch.int64, device=DEV)
    sig_bar = torch.zeros(C, dtype=torch.int64, device=DEV)
    entry_bar = torch.zeros_like(sig_bar)
    n_valid = valid.sum(dim=1)
    trades = [[] for _ in range(C)]
    o, h, lo, c = ind.o, ind.h, ind.l, ind.c
    # While every combo is flat with no entry pending, a bar changes
    # something only where some combo's signal is on (on its valid bar).
    signal_at = (valid & sig).any(dim=0).tolist()
    any_valid = valid.any(dim=0).tolist()
    busy = False        # some combo in position or entering at its next valid bar
    tp_set = torch.zeros_like(in_pos)   # use_tp & (tp > 0), set at each entry
    for t in range(n):
        if not (signal_at[t] or (busy and any_valid[t])):
            continue
        act = valid[:, t]
        # the bar after a signal: enter at its open (never checked for exits)
        enter = act & pending
        if bool(enter.any()):
            ot = o[t]
            st = torch.where(use_stop, sig_low - mult * sig_atr, zero)
            d = ot - st
            rk = torch.where(use_stop, torch.where(d > 1e-8, d, torch.full_like(d, 1e-8)), ot * 0.01)
            entry = torch.where(enter, ot, entry)
            stop = torch.where(enter, st, stop)
            risk = torch.where(enter, rk, risk)
            tp = torch.where(enter, torch.where(use_tp, ot + reward * rk, zero), tp)
            tp_set = use_tp & (tp > 0)
            bars = torch.where(enter, torch.zeros_like(bars), bars)
            entry_bar = torch.where(enter, torch.full_like(entry_bar, t), entry_bar)
            in_pos = in_pos | enter
            pending = pending & ~enter
        hold = act & in_pos & ~enter
        if bool(hold.any()):
            bars = bars + hold.to(torch.int64)
            # whether an exit of any kind comes; which one, on the bars where one does
            out = hold & ((use_stop & ((o[t] <= stop) | (lo[t] <= stop))) | (tp_set & (h[t] >= tp))
                          | (use_time & (bars >= max_hold)))
            if bool(out.any()):
                gap = use_stop & (o[t] <= stop)
                hit_stop = ~gap & use_stop & (lo[t] <= stop)
                hit_tp = ~gap & ~hit_stop & tp_set & (h[t] >= tp)
                px = torch.where(gap, o[t], torch.where(hit_stop, stop, torch.where(hit_tp, tp, c[t].expand(C))))
                code = lambda v: torch.full((C,), v, dtype=torch.int64, device=DEV)  # noqa: E731
                why = torch.where(gap, code(0), torch.where(hit_stop, code(1), torch.where(hit_tp, code(2), code(3))))
                fee = (entry + px) * cost_bp / 10000.0
                pnl = px - entry - fee
                r = pnl / risk
                # the exits' fields as Python numbers, one list per field
                ks = torch.nonzero(out).flatten()
                rows = zip(*[x[ks].tolist() for x in (sig_bar, entry_bar, entry, px, stop, tp, risk, pnl, r, why, bars)])
                for k, (sb, eb, *rest) in zip(ks.tolist(), rows):
                    trades[k].append((sb, eb, t, *rest))
                in_pos = in_pos & ~out
                busy = bool((in_pos | pending).any())
        # a signal on a flat valid bar (an exit bar included) enters at the next one
        look = act & ~in_pos & ~pending & ~enter & sig[:, t]
        if bool(look.any()):
            busy = True
            pending = pending | look
            sig_low = torch.where(look, lo[t], sig_low)
            sig_atr = torch.where(look, atr[:, t], sig_atr)
            sig_bar = torch.where(look, torch.full_like(sig_bar, t), sig_bar)
    held = in_pos.tolist()
    at_end = list(zip(*[x.tolist() for x in (sig_bar, entry_bar, entry, stop, tp, risk, bars)]))
    return sk.results_from([sk.Result(trades=trades[k], valid_bars=v, open_at_end=at_end[k] if held[k] else None)
                            for k, v in enumerate(n_valid.tolist())])


if __name__ == "__main__":
    name = "torch_float32" if FLOAT32 else "torch_float64"
    sys.exit(sk.serve(name, contract="tolerant" if FLOAT32 else "exact", tol=1e-4 if FLOAT32 else 0.0,
                      run=run, features=features,
                      description="python/examples/torch_kernel.py on %s, columns in %s"
                      % (DEV, "float32" if FLOAT32 else "float64")))
