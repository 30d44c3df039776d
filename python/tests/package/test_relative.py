"""The relative measures (docs/formats.md "The relative measures"): each
recomputed here from a run's trades and bars by a literal reading of the
formulas, in plain Python floats summed in trade order, and compared bit
for bit with what libsebt gives (RunResult.stats, `sebt run`'s JSON), over
many combos and the undefined cases."""
import json
import math
import struct

import numpy as np
import pytest

import sebt

YEAR_MS = 365.25 * 86400000.0


def bits(x):
    return struct.pack("<d", float(x))


def same(a, b):
    return (math.isnan(a) and math.isnan(b)) or bits(a) == bits(b)


def literal(trades, series, capital, fraction):
    """The formulas of docs/formats.md, written out anew."""
    ts, opens, closes = series.ts, series.column("open"), series.column("close")
    n = len(trades)
    rets = [float(t["pnl"]) / float(t["entry_price"]) if t["entry_price"] > 0 else math.nan for t in trades]
    rs = [float(t["r"]) for t in trades]
    years = (int(ts[-1]) - int(ts[0])) / YEAR_MS if len(ts) >= 2 else 0.0
    per_year = n / years if years > 0 else math.nan

    def mean_sd_down(xs):
        total = 0.0
        for x in xs:
            total += x
        mean = total / len(xs) if xs else math.nan
        sq = dn = 0.0
        for x in xs:
            sq += (x - mean) * (x - mean)
            neg = x if x < 0 else 0.0
            dn += neg * neg
        sd = math.sqrt(sq / (len(xs) - 1)) if len(xs) >= 2 else math.nan
        down = math.sqrt(dn / len(xs)) if xs else math.nan
        return mean, sd, down

    def ratio(a, b):
        return a / b if b > 0 and math.isfinite(b) else math.nan

    mean, sd, down = mean_sd_down(rets)
    mean_r, sd_r, _ = mean_sd_down(rs)
    out = {"capital": capital, "fraction": fraction}
    log_growth = 0.0
    for x in rets:
        log_growth += math.log1p(x) if x > -1 else (-math.inf if x == -1 else math.nan)
    best, worst = -math.inf, math.inf
    for x in rets:
        best = x if (x > best or math.isnan(x)) else best
        worst = x if (x < worst or math.isnan(x)) else worst
    bars = 0.0
    for t in trades:
        bars += float(t["bars_held"])
    out.update(best_trade_pct=100.0 * best if n else math.nan, worst_trade_pct=100.0 * worst if n else math.nan,
               avg_trade_pct=100.0 * math.expm1(log_growth / n) if n else math.nan,
               expectancy_pct=100.0 * mean, avg_trade_bars=bars / n if n else math.nan,
               longest_trade_bars=max([int(t["bars_held"]) for t in trades], default=0),
               volatility_pct=100.0 * fraction * sd * math.sqrt(per_year),
               return_sharpe=ratio(mean, sd) * math.sqrt(per_year),
               return_sortino=ratio(mean, down) * math.sqrt(per_year),
               sqn=ratio(mean_r, sd_r) * math.sqrt(n))
    # The equity, marked at each trade's exit; drawdown episodes from a peak
    # (bar 0 for the capital) to the exit that reaches it again, or the last bar.
    if any(math.isnan(x) for x in rets):
        out.update(final_equity=math.nan, total_return_pct=math.nan, annual_return_pct=math.nan,
                   max_dd_pct=math.nan, avg_dd_pct=math.nan, calmar=math.nan, longest_dd_bars=-1)
    else:
        equity, peak, peak_bar = capital, capital, 0
        depths, longest, depth, in_dd, worst_dd = [], 0, 0.0, False, 0.0
        for t, x in zip(trades, rets):
            g = 1.0 + fraction * x
            equity = equity * g if g > 0 else 0.0
            bar = int(t["exit_index"])
            if equity >= peak:
                if in_dd:
                    depths.append(depth)
                    longest = max(longest, bar - peak_bar)
                    in_dd, depth = False, 0.0
                peak, peak_bar = equity, bar
            else:
                dd = equity / peak - 1.0
                in_dd = True
                depth = min(depth, dd)
                worst_dd = min(worst_dd, dd)
        if in_dd:
            depths.append(depth)
            longest = max(longest, (len(ts) - 1 if len(ts) else 0) - peak_bar)
        total = 0.0
        for d in depths:
            total += d
        annual = 100.0 * (math.pow(equity / capital, 1.0 / years) - 1.0) if years > 0 else math.nan
        out.update(final_equity=equity, total_return_pct=100.0 * (equity / capital - 1.0), annual_return_pct=annual,
                   max_dd_pct=100.0 * worst_dd, avg_dd_pct=100.0 * (total / len(depths)) if depths else 0.0,
                   longest_dd_bars=longest, calmar=annual / -(100.0 * worst_dd) if worst_dd < 0 else math.nan)
    out["buy_hold_pct"] = 100.0 * (float(closes[-1]) / float(opens[0]) - 1.0) if len(ts) and opens[0] > 0 else math.nan
    return out


def check(r, series, capital=10000.0, fraction=1.0):
    want = literal(r.trades, series, capital, fraction)
    assert set(want) == set(sebt.library.RELATIVE_NAMES)
    for k, v in want.items():
        assert same(r.stats[k], v), (k, r.stats[k], v, r.params)


def combos(k, seed):
    rng = np.random.default_rng(seed)
    for _ in range(k):
        yield {"ema_fast": int(rng.integers(6, 60)), "ema_slow": int(rng.integers(100, 700)),
               "z_window": int(rng.choice([48, 96, 336])), "vol_z": float(rng.choice([0.5, 1.0, 1.5, 2.5])),
               "tr_z": float(rng.choice([0.5, 1.0, 1.5])), "reward_r": float(rng.choice([1.0, 2.0, 3.0])),
               "atr_stop_mult": float(rng.choice([0.3, 0.7, 1.5])), "max_hold": int(rng.choice([12, 48, 192])),
               "fee_bp": float(rng.choice([0.0, 7.5]))}


@pytest.mark.parametrize("name,seed", [("BTCUSDT-15m-2017-2021.csv.gz", 1), ("BTCUSDT-1m-2019-01.csv.gz", 2)])
def test_each_measure_equals_its_literal_recomputation(name, seed):
    s = sebt.load(sebt.bundled(name))
    n_traded = 0
    for c in combos(20, seed):
        for capital, fraction in ((10000.0, 1.0), (2500.0, 0.25)):
            r = sebt.run(s, capital=capital, fraction=fraction, **c)
            check(r, s, capital, fraction)
            n_traded += len(r.trades) >= 2
    assert n_traded >= 20   # the grid trades: the comparison is not of NaNs only


def test_undefined_cases(data_15m):
    s = sebt.load(data_15m)
    none = sebt.run(s, vol_z=50.0)             # no trade at all
    assert len(none.trades) == 0
    check(none, s)
    assert none.stats["total_return_pct"] == 0.0 and none.stats["max_dd_pct"] == 0.0
    for k in ("volatility_pct", "return_sharpe", "return_sortino", "calmar", "sqn", "best_trade_pct",
              "avg_trade_pct", "expectancy_pct"):
        assert math.isnan(none.stats[k]), k
    assert none.stats["longest_dd_bars"] == 0 and none.stats["longest_trade_bars"] == 0


def test_the_cli_json_and_text_carry_the_same_figures(cli, data_15m):
    doc = json.loads(cli("run", "--data", data_15m, "--format", "json", "--capital", "2500", "--fraction", "0.5"))
    r = sebt.run(data_15m, capital=2500, fraction=0.5)
    for k, v in doc["relative"].items():
        assert same(r.stats[k], math.nan if v is None else v), k
    text = cli("run", "--data", data_15m, "--format", "text").decode()
    assert "relative: trade returns (pnl / entry price) compounded from a capital of 10000 at 1 of the equity" in text
    assert "buy_hold_pct" in text and "sqn" in text


def test_bad_capital_or_fraction_is_refused(data_15m):
    with pytest.raises(sebt.SebtError):
        sebt.run(data_15m, fraction=1.5)
    with pytest.raises(sebt.SebtError):
        sebt.run(data_15m, capital=0)


def test_the_cli_refuses_a_fraction_or_capital_out_of_range(cli, data_15m):
    import subprocess
    for bad in (["--fraction", "1.5"], ["--fraction", "0"], ["--capital", "-5"], ["--capital", "nan"]):
        p = subprocess.run([cli.exe, "run", "--data", data_15m] + bad, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert p.returncode == 2, (bad, p.returncode)
        assert bad[0] in p.stderr.decode(), p.stderr
